/* cmd_generate.c - `fusetile generate`: write a generated capacity-tight problem (ft_generate) as contest JSON. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char generate_help[] =
    "usage: fusetile generate [--ops N] [--seed S] [--family contest|small|scale] [-o FILE]\n"
    "\n"
    "Writes a generated problem in the contest's problem format: MLP chains,\n"
    "attention blocks (Q/K/V projections sharing an input, a QK^T-like MatMul,\n"
    "a softmax-like Pointwise, AV and the output projection), residual\n"
    "diamonds, shared weights and Pointwise ops of 1 to 3 inputs, with a fast\n"
    "memory capacity below the largest op's native tile working set (every op\n"
    "still fits a smaller tile: the one-op schedule is checked valid).  The\n"
    "same options give the same file.\n"
    "\n"
    "  --family F     contest (default): 10 to 150 ops, sizes 100 to 4096,\n"
    "                 native granularity 128 x 128, contest costs and bandwidths;\n"
    "                 small: 1 to 8 ops, native 4 to 16, sizes 3 to 64 (for\n"
    "                 exact solving with tools/exact);\n"
    "                 scale: any op count (default 1000), sizes 128 to 512\n"
    "  --ops N        number of ops (default: drawn from the seed; small: <= 8)\n"
    "  --seed S       seed, an integer from 0 to 2^64-1 (default 1)\n"
    "  -o, --output FILE  write there, atomically (default: stdout)\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 written, 2 bad usage or an unwritable FILE.\n";

int cmd_generate(int argc, char **argv)
{
    cli_opts o;
    const char *arg, *output = NULL;
    int is_opt;
    ft_gen_opts g;
    ft_gen_opts_init(&g);
    cli_opt_init(&o, argc, argv);
    while ((arg = cli_opt_next(&o, &is_opt))) {
        if (!is_opt) {
            cli_error("generate: unexpected argument '%s' (try 'fusetile generate --help')", arg);
            return EXIT_USAGE;
        } else if (cli_opt_is(&o, arg, "--help") || cli_opt_is(&o, arg, "-h")) {
            fputs(generate_help, stdout);
            return EXIT_OK;
        } else if (cli_opt_is(&o, arg, "--output") || cli_opt_is(&o, arg, "-o")) {
            if (!(output = cli_opt_file(&o, arg[1] == '-' ? "--output" : "-o")))
                return EXIT_USAGE;
            output = cli_out_or_stdout(output);
        } else if (cli_opt_is(&o, arg, "--ops")) {
            const char *v = cli_opt_value(&o, "--ops");
            uint64_t n;
            if (!v)
                return EXIT_USAGE;
            if (cli_parse_u64(v, &n) || n < 1 || n > 10000000) {
                cli_error("generate: --ops is '%s', must be an integer from 1 to 10000000", v);
                return EXIT_USAGE;
            }
            g.nops = (int)n;
        } else if (cli_opt_is(&o, arg, "--seed")) {
            const char *v = cli_opt_value(&o, "--seed");
            if (!v)
                return EXIT_USAGE;
            if (cli_parse_u64(v, &g.seed)) {
                cli_error("generate: --seed is '%s', must be an integer from 0 to 18446744073709551615", v);
                return EXIT_USAGE;
            }
        } else if (cli_opt_is(&o, arg, "--family")) {
            const char *v = cli_opt_value(&o, "--family");
            if (!v)
                return EXIT_USAGE;
            if (ft_gen_family_parse(v, &g.family)) {
                cli_error("generate: --family is '%s', must be contest, small or scale", v);
                return EXIT_USAGE;
            }
        } else {
            cli_error("generate: unknown option '%s' (try 'fusetile generate --help')", arg);
            return EXIT_USAGE;
        }
    }
    if (g.family == FT_GEN_SMALL && g.nops > 8) {
        cli_error("generate: --ops is %d, the small family has at most 8 ops", g.nops);
        return EXIT_USAGE;
    }
    ft_problem *p;
    ft_status st;
    if (ft_generate(&g, &p, &st) != FT_OK) {
        cli_error("generate: %s", st.msg);
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    if (output) {
        if (ft_problem_write(p, output, &st) != FT_OK) {
            cli_error("generate: %s", st.msg);
            rc = EXIT_USAGE;
        }
    } else {
        char *text = ft_problem_to_json(p);
        if (!text) {
            cli_error("generate: out of memory");
            rc = EXIT_USAGE;
        } else {
            fputs(text, stdout); /* a failed write: cli_finish_stdout */
            free(text);
        }
    }
    ft_problem_free(p);
    return rc;
}
