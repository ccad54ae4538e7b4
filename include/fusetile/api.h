/* api.h - the export mark of fusetile's public API (installed as <fusetile/api.h>): every public header wraps its declarations in FT_API_BEGIN and FT_API_END, and the library is compiled with -fvisibility=hidden, so libfusetile.so exports exactly what the public headers declare and none of the internal ft__ functions. */
#ifndef FT_API_H
#define FT_API_H

#if defined(__GNUC__) && __GNUC__ >= 4
/* Declarations between the two marks have default visibility: exported
 * from the shared library even when it is built with -fvisibility=hidden. */
#define FT_API_BEGIN _Pragma("GCC visibility push(default)")
#define FT_API_END _Pragma("GCC visibility pop")
#else
#define FT_API_BEGIN
#define FT_API_END
#endif

#endif
