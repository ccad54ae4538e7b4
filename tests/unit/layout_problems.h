/* layout_problems.h - inline problems with Layout ops (SPEC 1 and 4), shared by test_layout.c and test_sim.c; header-only, needs ft_testutil.h's PJ and op names. */
#ifndef FT_LAYOUT_PROBLEMS_H
#define FT_LAYOUT_PROBLEMS_H

#define LY "\"Layout\""

/* Vectors L-im2col-fused and L-im2col-split: op0 Layout T0 (16w x 128h)
 * -> T1 (144w x 64h, the im2col matrix); op1 MatMul T1 x T2 (8w x 144h)
 * -> T3 (8w x 64h), K = 144.  Native [48, 32], bandwidth 4. */
#define IM_PROBLEM                                                           \
    PJ("[16, 144, 8, 8]", "[128, 64, 144, 64]", "[[0], [1, 2]]",             \
       "[[1], [3]]", "[50, 200]", "[" LY ", " MM "]", "20000", "4",          \
       "[48, 32]")
#define IM_FUSED SJ("[[0, 1]]", "[[8, 32, 48]]", "[[]]")
#define IM_SPLIT SJ("[[0], [1]]", "[[48, 32, 1], [8, 32, 48]]", "[[], []]")

/* Vector L-epilogue: op0 MatMul T0 (64w x 64h) x T1 (32w x 64h) -> T2
 * (32w x 64h), K = 64; op1 Layout T2 -> T3 (16w x 128h).  Native [32, 32],
 * bandwidth 8. */
#define EP_PROBLEM                                                           \
    PJ("[64, 32, 32, 16]", "[64, 64, 64, 128]", "[[0, 1], [2]]",             \
       "[[2], [3]]", "[400, 30]", "[" MM ", " LY "]", "20000", "8",          \
       "[32, 32]")
#define EP_FUSED SJ("[[0, 1]]", "[[32, 32, 32]]", "[[]]")

/* Vector L-nondiv: one Layout op T0 (10w x 7h) -> T1 (4w x 3h), native
 * [2, 2], bandwidth 1. */
#define ND_PROBLEM                                                           \
    PJ("[10, 4]", "[7, 3]", "[[0]]", "[[1]]", "[10]", "[" LY "]", "1000",    \
       "1", "[2, 2]")
#define ND_SCHEDULE SJ("[[0]]", "[[2, 2, 1]]", "[[]]")

/* Vector L-upsample: one Layout op T0 (2w x 2h) -> T1 (2w x 8h), native
 * [2, 2], bandwidth 1. */
#define UP_PROBLEM                                                           \
    PJ("[2, 2]", "[2, 8]", "[[0]]", "[[1]]", "[1]", "[" LY "]", "1000", "1", \
       "[2, 2]")
#define UP_SCHEDULE SJ("[[0]]", "[[2, 2, 1]]", "[[]]")

/* A small CNN as an importer lowers it (sizes that do not divide native 8):
 *   op0 Layout  T0 (3w x 64h: 8x8 pixels, 3 channels) -> T1 (27w x 36h: im2col
 *               of a 3x3 valid convolution, 6x6 outputs)
 *   op1 MatMul  T1 x T2 (16w x 27h) -> T3 (16w x 36h)
 *   op2 Pointwise T3 -> T4 (ReLU)
 *   op3 Layout  T4 -> T5 (144w x 16h: im2col of the next 3x3 convolution)
 *   op4 MatMul  T5 x T6 (10w x 144h) -> T7 (10w x 16h)
 *   op5 Layout  T7 -> T8 (160w x 1h: flatten)
 *   op6 MatMul  T8 x T9 (5w x 160h) -> T10 (5w x 1h). */
#define CNN_PROBLEM                                                          \
    PJ("[3, 27, 16, 16, 16, 144, 10, 10, 160, 5, 5]",                        \
       "[64, 36, 27, 36, 36, 16, 144, 16, 1, 160, 1]",                       \
       "[[0], [1, 2], [3], [4], [5, 6], [7], [8, 9]]",                       \
       "[[1], [3], [4], [5], [7], [8], [10]]",                               \
       "[8, 64, 8, 8, 64, 8, 64]",                                           \
       "[" LY ", " MM ", " PW ", " LY ", " MM ", " LY ", " MM "]", "1500",    \
       "2", "[8, 8]")

/* Products of lengths past 64 bits: op0 Layout T0 (1w x 4e9h) -> T1
 * (1w x 3e9h); a tile of 1e9 rows of T1 needs the rows of T0 between
 * floor and ceil of 4/3 of its ends, and 3e9 x 4e9 overflows int64. */
#define BIG_PROBLEM                                                          \
    PJ("[1, 1]", "[4000000000, 3000000000]", "[[0]]", "[[1]]", "[1]",       \
       "[" LY "]", "10000000000", "1000", "[1, 1000000000]")
#define BIG_SCHEDULE SJ("[[0]]", "[[1, 1000000000, 1]]", "[[]]")

#endif /* FT_LAYOUT_PROBLEMS_H */
