/*
 * third.c - the third threshold scale (engine_int.h): where the first
 * scale's tree leaves structure no symbol explains, windows of the frame
 * are read again by other thresholds and passes, and their symbols join
 * the scales' merge (engine.c). docs/recognition.md tells each pass's
 * rules and measurements.
 */
#include "engine_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/err.h"
#include "../core/log.h"
#include "../threshold/upsample.h"
#include "merge.h"

/* Pixels a window reaches past the structure it was found for: where a
 * hard shadow turns part of a symbol uniform in the first scale's mask,
 * the window must still hold the whole symbol, also where a decoded
 * neighbour's box hides part of its structure (64 and 96 lost one on the
 * uneven preset). */
#define THIRD_PAD 128
/* The ink windows' pad (windows_find_ink): a symbol's own blocks are ink,
 * so the pad need only take in the rest of a symbol whose ink tiles it
 * does not fill. */
#define THIRD_INK_PAD 32
/* Each ink window is read twice: by the closing at close_pct and by the
 * same closing at THIRD_INK_PCT_LESS points under it (closing_again: no
 * second closing). Where a hard shadow's penumbra crosses a symbol of
 * 24-48 px, the closing's running maximum fills the ink with the paper of
 * the ramp's brighter side, up to its radius across the ramp, and the
 * shadowed paper beside the ink falls under 70 % of that. Measured
 * (docs/recognition.md, "The ink windows read twice": shadow-small, 24
 * frames, seeds 44-48, both sets, 1920 symbols): 1548 read, 1573 with 65 % (no wrong
 * ID or false positive added, one removed); 60 % read 10 more at seeds
 * 44-46 where 65 % read 14, and 60 % as a third read 2 more at 44-48; 65
 * % in place of 70 % lost 8 at 44-46; the ratio pass's rule at radius 3
 * as a third read 5 more at 44-46 for 2.3 M instructions a 1080p DI
 * frame (its own window extremes). */
#define THIRD_INK_PCT_LESS 5
/* The smallest radius of the second pass (mean_scale3): a 7 px window
 * still averages over a dot and its surround. */
#define THIRD_SCALED_MIN_RADIUS 3
#define THIRD_SCALED_MAX_RADIUS 63
/* Pixels of radius by which a second-pass symbol's own radius (the rule
 * on its size) may differ from its window's and still count: within a
 * window all symbols take the largest one's radius. */
#define THIRD_SCALED_TOLERANCE 2
/* The step between the rungs of its ladder (third_scaled): rungs 3 apart
 * overlap by their tolerance. On sheet-half, 12 seeds (24 frames,
 * reacTIVision's set, 3456 symbols), a step of 5 (rungs that just meet,
 * as the closing pass's) read 3205 with 10 wrong IDs, 4 3214 (10), 3
 * 3217 (9); 3 also read more at 24 frames on room and sun with our set and
 * on sheet-half, for 7.6% more CPU than 5 on sun (callgrind). */
#define THIRD_SCALED_STEP 3
/* The floor of the ladder's first rung (a window's own radius) where the
 * third scale's method takes its gate as one (mean, sauvola): windows
 * darker on average than this are black, not the gate's 32. Where two
 * hard shadows overlap the paper keeps 6-20 % of the light, so a
 * symbol's shadowed part averages under 32 and came out black. Measured
 * on 24-frame sets at fresh seeds (2026-12-07): the 58-set survey
 * (12,036 symbols) 10,101 -> 10,105 read, 48 held-out sets (9,891)
 * 8,910 -> 8,923, 20 more of shadowed presets (1,994) 1,843 -> 1,847,
 * no wrong ID added; shadow-dark seeds 701-704 +10 of 768. The lower
 * rungs keep the gate: there floor 8 read 13 more of the survey but
 * added a wrong ID (a 32 px 4, half in a sun shadow, read as 85 at
 * radius 3, where the floor opened holes in a blob that the blur had
 * filled), and floors of 12-20 added one each too. */
#define THIRD_SCALED_DARK_FLOOR 8
/* The small-symbol pass (third_small, radius_small): windows around
 * unexplained structure under THIRD_SMALL_WIN_PX a side, reaching
 * THIRD_SMALL_PAD pixels past its tiles (a card's margin and ring reach a
 * few pixels past its root); of its symbols, those of at most
 * THIRD_SMALL_MAX_PX count (the others are the other passes' to read). */
#define THIRD_SMALL_WIN_PX 40
#define THIRD_SMALL_PAD 8
#define THIRD_SMALL_MAX_PX 40
/* The upsampled pass (third_up, radius_up): windows as the small-symbol
 * pass's around structure under THIRD_UP_WIN_PX a side, each enlarged
 * and thresholded at twice the size whole where it fits in
 * THIRD_UP_TILE + 2 THIRD_UP_REACH pixels a side, else cut into tiles of
 * THIRD_UP_TILE, each enlarged with THIRD_UP_REACH pixels around it (a
 * symbol of THIRD_UP_MAX_PX whose centre lies in the tile lies wholly in
 * that, 8 px to spare); a symbol counts in the tile its centre lies in, so
 * tiles that overlap read it once. Symbols of up to 96 px: where a hard
 * shadow crosses a symbol of 55-75 px seen through a wide lens at a tilt,
 * the walls between a blob's holes are 1-1.5 px and every threshold of
 * the frame joins the holes; enlarged they stay apart (the oblique preset
 * with reacTIVision's set, seeds 60-75: 3 more of 3070, sheet-half 1 more
 * of 288, nothing lost, no wrong ID; 64 px before). THIRD_UP_HALO_MAX: the
 * most frame pixels a threshold reads past the enlarged part (radius_up <=
 * THIRD_UP_MAX_RADIUS and the Gaussian's taps, in enlarged pixels, halved,
 * rounded up, and one more for the bilinear neighbour). */
#define THIRD_UP_WIN_PX 96
#define THIRD_UP_TILE 192
#define THIRD_UP_REACH 56
/* The pixels past an enlarged part that the enlargements read (Lanczos-3's
 * taps), which up_enlarge_sharpened() sharpens with the part. */
#define UP_SHARPEN_MARGIN 3
/* The most runs the sharpened read of a window segments, a share of what
 * the upsampled pass's segmenter holds (up_ink_part()). */
#define UP_SHARPEN_RUNS_SHARE 0.5f
/* The stronger sharpened read's amount, in halves (up_ink_part()). */
#define UP_SHARPEN_STRONG 3
/* inside_larger()'s reach, a fraction of the larger symbol's size. */
#define UP_INSIDE_LARGER 0.6f
#define THIRD_UP_MAX_PX 96
#define THIRD_UP_MAX_RADIUS 8
#define THIRD_UP_HALO_MAX ((THIRD_UP_MAX_RADIUS + THRESHOLD_GAUSS_MAX_RADIUS + 1) / 2 + 1)
/* The upsampled pass's Lanczos read (up_sharp): the places of the third
 * scale's fuzzy reads of at most UP_SHARP_MAX_PX (frame pixels), the
 * pass's own cap; the trees of the first UP_SHARP_MAX_TREES fuzzy reads
 * of a frame of the pass's own Bernsen read (of those sizes too) are kept
 * to judge its reads by. A box is no measure of a symbol's detail: one of
 * 30-35 px turned, foreshortened by a tilt or squeezed by a barrel lens
 * near the frame's edge spans 41-56 px with holes and walls of 1-1.5 px
 * across, and a cap of 40 px (before) left the places of such symbols in
 * room's corners and in sheet-half's shadows unread: 24 frames, room
 * seeds 80-91, our set 1212 -> 1227 of 1320, reacTIVision's 1264 -> 1266;
 * sheet-half (reacTIVision's set) seed 41 0.962 -> 0.979, seeds 501-524
 * 6520 -> 6673 of 6912; no wrong ID added with the joined-blob rule (decode.c, joined_read), which holds the three
 * sheet-half symbols crossed by a shadow's edge that it read as other IDs
 * without (docs/recognition.md, "The Lanczos read of squeezed symbols"). */
#define UP_SHARP_MAX_PX THIRD_UP_MAX_PX
/* The ink windows' reads (up_ink_part) of at most INK_UP_WHOLE_PX stand
 * as read; larger ones only where another threshold confirms them. */
#define INK_UP_WHOLE_PX 40
/* The upsampled pass's read of the ink windows (ink_up, up_ink_part): the
 * ink tiles no third-scale symbol read yet, grown by INK_UP_PAD (a symbol
 * of up to INK_UP_WHOLE_PX whose ink tiles lie at its side), enlarged by
 * Lanczos-3 and thresholded by the local mean over INK_UP_MEAN_RADIUS
 * enlarged pixels less INK_UP_MEAN_BIAS percent where Bernsen's window
 * (radius_up, gate_up) is steep, its flat rule elsewhere
 * (THRESHOLD_GATED). Measured on shadow-small, 24 frames, seeds 44-48,
 * reacTIVision's set, 960 symbols, every ink tile read
 * (docs/recognition.md, "The ink windows enlarged"): 848 read before,
 * 884 at mean radius 3 and bias 3; bias 5 881 and bias 0 873, each with a
 * wrong ID more; radius 4 874-877; a pad of 16 881, of 32 as 24. */
#define INK_UP_PAD 24
#define INK_UP_MEAN_RADIUS 3
#define INK_UP_MEAN_BIAS 3
/* The Lanczos read's fourth threshold (up_sharp, with ink_up): Sauvola
 * over INK_UP_SAUVOLA_RADIUS enlarged pixels, k INK_UP_SAUVOLA_K percent,
 * R 128, windows darker on average than INK_UP_SAUVOLA_GATE black. Read at
 * the places of the crossed symbols of 24-32 px that the local mean left
 * (shadow-small, seeds 44-48, reacTIVision's set: 50), it read 19 where
 * the local mean read 11-12; in place of the local mean over the ink
 * tiles it read 3 more of 960 but added a wrong ID. */
#define INK_UP_SAUVOLA_RADIUS 4
#define INK_UP_SAUVOLA_K 10
#define INK_UP_SAUVOLA_GATE 8
/* Where neither of those reads a symbol, the enlargement encoded with this
 * gamma (255 (v / 255)^(1 / gamma)) and read by the local mean again: the
 * encoding lifts a shadow's dark paper and ink apart and the mean's level
 * with them. 1.6 and 3 read less (docs/recognition.md, "The ink windows'
 * encoded read"). */
#define INK_UP_ENCODE_GAMMA 2.2
/* The upsampled pass's fine read (up_fine, fine_up): the places of
 * regions of its Bernsen read of THIRD_UP_FINE_MIN_PX to THIRD_UP_MAX_PX
 * that no read explains, at most UP_FINE_MAX_PLACES a frame, enlarged
 * again by Lanczos-3 and thresholded by Bernsen at THIRD_UP_FINE_RADIUS
 * enlarged pixels, keeping a symbol of at least THIRD_UP_FINE_MIN_PX.
 * A barrel lens (k1 -0.35) squeezes a 33-43 px symbol near the frame's
 * edges radially until its holes and walls are 1-1.5 px across; the
 * bilinear enlargement blurs them into their neighbours and a 5 px
 * window joins them, so neither the pass's Bernsen nor its closing read
 * leaves even a fuzzy tree there (nor does up_sharp() look there);
 * Lanczos keeps them apart and a 3 px window follows them (barrel, our
 * set, seed 32, 48 frames: 0.969 -> 0.984). Below THIRD_UP_FINE_MIN_PX its
 * ringing raises specks taken for dots while a hole is lost: on the small
 * preset (20-24 px, reacTIVision's set, seed 36, 48 frames) the read of
 * every part with no floor read 75 more of 672 symbols, two of them
 * (17-22 px) as another ID. */
#define THIRD_UP_FINE_RADIUS 1
#define THIRD_UP_FINE_MIN_PX 28
/* The upsampled pass's read three times enlarged (up_triple, with
 * sharp_up): the places of regions of its Bernsen read of
 * UP_TRIPLE_MIN_PX up to THIRD_UP_FINE_MIN_PX, enlarged three times by
 * Lanczos-3 and thresholded by Bernsen at radius_up and gate_up; a read
 * one hole moved from another ID's stands only where Bernsen at
 * UP_TRIPLE_CHECK_RADIUS enlarged pixels reads it too. Measured on the
 * small preset with reacTIVision's set, 16 frames (docs/recognition.md,
 * "The read three times enlarged"): seeds 40-47 at 20-24 px 347 -> 460 of
 * 1792, seeds 40-79 at 24-28 px 7884 -> 8159 of 8960, the same wrong IDs;
 * without the second read 570 and 8259 but 2 and 3 wrong IDs more
 * (a hole closed or cut open and a piece of wall or noise taken for a
 * dot); radius 1 for it 420 and 8017. */
#define UP_TRIPLE_MIN_PX 14
/* The rectified read (up_rectify): places of at most RECT_MAX_PX; the
 * squeeze read (rect_shape) within RECT_REACH of a place's size from its
 * centre, of pixels over RECT_INK of the most any differs from the paper
 * of the square reaching RECT_CROP of its size; read where the squeeze is
 * at least RECT_MIN_ASPECT, undone up to RECT_MAX_ASPECT, and the place
 * enlarged RECT_ENLARGE times along its long axis. */
#define RECT_MAX_PX 48
#define RECT_REACH 1.1f
#define RECT_INK 0.35f
#define RECT_CROP 1.25f
#define RECT_MIN_ASPECT 1.25f
#define RECT_MAX_ASPECT 3.0f
#define RECT_ENLARGE 2
/* The rectified square reaches RECT_OUT of a place's size (and
 * THIRD_SMALL_CHECK_PAD) past its centre, enlarged; at most
 * RECT_MAX_PLACES places a frame are read so. */
#define RECT_OUT 0.8f
#define RECT_MAX_PLACES 8
/* The rectified read's rungs where the rule's radius reads nothing there:
 * the deblurring pass's lower one, then this. */
#define RECT_HIGH_RADIUS 16
#define UP_TRIPLE_CHECK_RADIUS 3
#define THIRD_UP_SIDE (THIRD_UP_TILE + 2 * THIRD_UP_REACH + 2 * THIRD_UP_HALO_MAX)


/* Both passes look only at small structure whose grey has a standard
 * deviation of at least the first scale's gate divided by this
 * (windows_find_small): a patch of noise specks, 3.5-4.6 levels on std-1080; a
 * symbol whose ink and paper differ by the gate, about half the gate. */
#define THIRD_SMALL_SD_DIV 4

/* Its check (small_check) reads a window reaching this many pixels past
 * each symbol's root box side around its centre: the card and the table
 * around it, so that the root has its parent. */
#define THIRD_SMALL_CHECK_PAD 4

/* The tie-break read (third_tie_break) reaches this many pixels past each
 * disputed symbol's root box side around its centre. */
#define TIE_PAD 8

/* The closing pass (close_scale3, threshold/closing.h): its smallest
 * radius, its largest. At radius 2 the blurred one-pixel holes of 40 px
 * symbols fall under the closing's grey: a one-hole blob read as a dot
 * turned symbol 4 into 80 on the sheet-half preset. */
#define THIRD_CLOSE_MIN_RADIUS 3
#define THIRD_CLOSE_MAX_RADIUS CLOSING_MAX_RADIUS
/* The closing pass's read at a lower gate (close_dark) is made again with
 * each window's radius two, then up to this many times larger
 * (third_closed): a black card's root is too wide for the closing at the
 * symbol's own radius to fill. */
#define THIRD_DARK_WIDE 3
/* ... and the ink windows' (at THIRD_CLOSE_MIN_RADIUS) up to this many
 * times theirs. */
#define THIRD_INK_DARK_WIDE 2
/* The ratio pass (ratio3) reads each window at the first scale's radius
 * and again at this one: where a hand's finger casts a shadow narrower
 * than the symbol, the small window stays on one side of the stripe's
 * edges (radius 3 and 8 together read 6 more of 1228 symbols of hard
 * shadows and room scenes than 8 alone; 2 read two wrong IDs on the room
 * preset). */
#define THIRD_RATIO_SMALL_RADIUS 3
/* With ratio3_large it reads each window again at THIRD_RATIO_LARGE_RUNGS
 * radii, 2, 3, ... times the first scale's: under a shadow's edge a
 * symbol of over about 100 px needs a window that spans its blobs and
 * dots and the paper between them (at radius 8 a 200 px symbol's shadowed
 * paper far from ink is flat, and Bernsen's flat-area rule paints it
 * black). A rung keeps only symbols of THIRD_RATIO_LARGE_MIN to
 * THIRD_RATIO_LARGE_MAX times its radius (the last rung any larger one;
 * at 6 times the radius a 102 px symbol of the sheet preset read at radius
 * 16 and 24 as another ID, ratio_finish()), and runs only in windows whose
 * unexplained structure (windows_live_side) has a region of at least
 * THIRD_RATIO_LARGE_SIDE times its radius a side: the cut root of a 207 px
 * symbol left pieces of about 100 px; the sun preset's 32-96 px symbols
 * leave none over 78 px, and there the rungs cost 40 M instructions a
 * 640x480 frame for nothing without the bound, 15.6 M with 3 radii (the
 * first rung still runs), 6.7 M with 4 (but shadow-large 0.969 -> 0.906
 * with reacTIVision's set). Of the shadow preset's symbols drawn at
 * 120-240 px on 1280x960 frames the pass read 0.871 without the rungs,
 * 0.968 with radius 16 alone, 0.984 with 24 alone or 32 alone. */
#define THIRD_RATIO_LARGE_RUNGS 3
#define THIRD_RATIO_LARGE_MIN 6
#define THIRD_RATIO_LARGE_MAX 10
#define THIRD_RATIO_LARGE_SIDE 3
/* The slope of the light (grey levels a pixel) that a large rung's gate
 * allows for over the first scale's (large_rung_gate()): under an IR
 * lamp's hot spot a flat, noisy table's window of radius 32 spans the
 * gate by the gradient alone, and the ratio rule, v^2 against lo hi,
 * turns its noise into structure where v is near the window's mean (the
 * uneven preset, seed 33, frame 34: 8886 regions at radius 32 and gate
 * 39, past the segmenter's 8896 and cut short; the hot spot's flanks slope
 * 0.25 to 1.8 grey a pixel, and where it is steeper the window's range
 * passes any gate but the ratio rule's margin is wider). At 0.25, gates
 * 40, 46 and 51 at radius 16, 24 and 32 for gate 32 (36, 38 and 39
 * before): 2021 regions there, and every read of the 24- and 48-frame
 * sets, the extra seeds and sheet-full the same; 0.5 the same, 1.0 lost 3
 * of shadow-large's 189 symbols. */
#define THIRD_RATIO_LARGE_SLOPE 0.25
/* The ratio pass's reads whose root the hairline round rebuilt, with a dot
 * of 10 px or more filling under THIRD_RATIO_DOT_FILL of its moment ellipse,
 * are vetoes too (match.h dot_min_fill): there the pixel tests of a cut
 * (decode.c, cut_read) see nothing, and a bent piece of a broken wall
 * passes for a dot (sheet-half at 48 frames, frame 47: a 53 px 2 read as
 * 94, three blobs one hole short each, a 12 px piece of wall filling
 * 0.71 beside dots of 5-7 px). Over the pass's 2035 whole reads of such
 * roots on the 24- and 48-frame sets and 54 more sets of sheet-half, the
 * gamma-encoded sheet, phone-half and shadow-small (reacTIVision's set),
 * such a dot came with 54 reads of another ID than the symbol's (17
 * vetoes already) and 2 where no symbol lay, none of the symbol's ID:
 * right reads' dots of 10 px or more filled 0.81 of it or more. */
#define THIRD_RATIO_DOT_FILL 0.75f
/* The deblurring pass (deblur3): its windows reach THIRD_DEBLUR_PAD pixels
 * past the structure they were found for (a streak does not hide a
 * symbol's structure as a shadow does, but smears it a few pixels), and
 * are thresholded with THIRD_DEBLUR_HALO more around them. */
#define THIRD_DEBLUR_PAD 32
#define THIRD_DEBLUR_HALO 16
/* A window deconvolved for a streak is also thresholded at this local-mean
 * radius (deblur_read), mostly below the rule's: on motion-640's frame 2 a
 * 66 px symbol whose window's radius is 10 reads at 4-6 and not at 8-16
 * (the streak's ghosts inside that window). Windows of radius 3-4 gain
 * from it too (motion-640 0.924 without them). */
#define THIRD_DEBLUR_LOW_RADIUS 5
/* ... only in windows whose streak is plain: motion-640's streaked windows
 * have an anisotropy of 0.26-0.59, the motion preset's 0.21-0.62; sharp
 * structure near deblur.h's bound of 0.65 is taken for a short streak
 * there too (sheet-half: a window at 0.65 whose lower rung read a 49 px
 * 1 as 48). */
#define THIRD_DEBLUR_LOW_ANISOTROPY 0.6f
/* ... and of a streak at least this long: a printed sheet under a 45 deg
 * tilt, sharp, passed for a streak of 4.7 px at an anisotropy of 0.56
 * (the gamma preset read with --camera-gamma 2.2, seed 982, frame 3),
 * and its lower rung read a 46 px 9 as 13; streaks of 4 px lose 3 of 166
 * reads without the rungs (seed 991), every other guard collection none. */
#define THIRD_DEBLUR_RUNG_MIN_LENGTH 5.0f
/* ... and, in those windows, at this one, above the rule's: a local mean
 * as wide as a 60-70 px symbol's cell smooths the ringing the
 * deconvolution leaves on the paper, which a narrow one turns into specks
 * and bridges. Of the symbols of 60-100 px under 6 px streaks
 * (tabletrack-scenes --motion 6 --fids 6 --fid-size 60:100 --light 0
 * --blur 0, seeds 201-203) that no pass read, 23 of 69 read right at some
 * radius over their window's (8-16; at 14, 20), and 3 wrong anywhere.
 * Once the pass's threshold kept specks off the paper by its hysteresis
 * (deblur.h, DEBLUR_SEED_BIAS), wider read more: the guard survey 11,735
 * at 14, 11,787 at 20, 11,822 at 28, 11,830 at 32 (a wrong ID more). */
#define THIRD_DEBLUR_HIGH_RADIUS 28
/* A window whose streak is longer than DEBLUR_LONG_FROM and whose
 * DEBLUR_ITERATIONS rounds read no symbol is read again with
 * deblur_long_rounds() rounds (its symbols fallbacks), a rung's read kept
 * only where the same rungs read its ID there at this many rounds fewer:
 * without that, 15 streaked collections (seeds 903-936) read 25 symbols
 * more and 2 of another ID, a read that one or two round counts give and
 * the others do not; at 1 round fewer a held-out set read one of another
 * ID, at 2-4 none (docs/recognition.md "Longer streaks, more rounds"). */
#define THIRD_DEBLUR_CONFIRM_ROUNDS 3
/* A window deconvolved for a defocus whose DEBLUR_ITERATIONS rounds read
 * no symbol is deconvolved on to the first of these and read again
 * (doubtful, as the first), and where that reads none either, on to the
 * second: Gaussians of 2.2-2.8 px over 48-72 px symbols, where 8 rounds
 * leave the holes a few grey levels from their walls (docs/recognition.md,
 * "More rounds for a defocus"). Each round count's grey is also read
 * encoded (deblur_rethreshold_encoded) where its plain read has none. */
static const int third_defocus_rounds[] = {12, 20};
/* Where most of its windows read a defocus, the pass also reads the small
 * structure's windows (windows_find_small, under THIRD_UP_WIN_PX a side)
 * padded by THIRD_DEBLUR_SMALL_PAD, for a defocus only; the radius only
 * sizes their halo. */
#define THIRD_DEBLUR_SMALL_PAD 24
/* The next frame is deconvolved whole for a defocus where most of the
 * rule's windows read one and their median blur is at least this (a blur of
 * 1.3-1.4 is also what a soft lens under hard shadows reads: room frames,
 * where whole frames gained nothing and one cut its tree short). */
#define THIRD_DEBLUR_FRAME_SIGMA 1.5f
/* ... and only where the print is not sharp: the median of those windows'
 * sharpest steps' blur (deblur.h, sharp) at least this. Hard shadows
 * (their penumbra of 1-4 px) over symbols of 24-48 px, whose print's
 * edges are too short to be read as the blur's long steps, read a median
 * blur of 1.5-1.7 in a few frames (the shadow-small preset: 3 of 24
 * frames read whole, one cut its tree short), but their print's sharpest
 * steps 0.75-0.82 by the frame's median (seeds 44-46 and 144, both sets;
 * room frames, a soft lens of 0.8 px under hard shadows, 0.81 and 0.87);
 * frames out of focus by a Gaussian of 2.0-2.6 px that read a median blur
 * of 1.5 read 1.13-1.71. The small windows (THIRD_DEBLUR_SMALL_PAD) ask
 * the same of the frame. */
#define THIRD_DEBLUR_FRAME_SHARP 0.9f
/* and only in frames of at most this many pixels (800x600 and smaller):
 * it reaches symbols under about 48 px, which a larger frame's camera
 * resolves less often, and it costs in proportion to the frame (1080p
 * frames of 90-150 px symbols under a blur of 3.2 px: the frame's CPU
 * 152 -> 311 ms on the 2-core build machine, no symbol gained). */
#define THIRD_DEBLUR_FRAME_MAX_PX (800 * 600)
#define THIRD_DEBLUR_SMALL_RADIUS 8
/* The third scale thresholds the frame with its own method (the first
 * scale's other settings), in windows only (windows.h); its symbols are
 * merged where neither other scale found one. With the repair round: in
 * windows it costs little, and it finds symbols a shadow edge broke. Its
 * passes read the shadows' damage, so with the bay rule (match.h bays):
 * the ratio and deblurring passes take this configuration too. */
void third_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc)
{
	*tc = c->thr;
	tc->mode = c->mode3;
	engine_symbols_only(c, mc);
	mc->bays = true;
}

/* The small-symbol pass thresholds with Bernsen at radius_small and no
 * median (a 3 x 3 median erases the 1-2 px holes of symbols under about
 * 30 px), the first scale's gate and blur. False: off. */
bool third_small_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc)
{
	*tc = c->thr;
	tc->mode = THRESHOLD_BERNSEN;
	tc->radius = c->radius_small;
	tc->median = 0;
	engine_symbols_only(c, mc);
	mc->few_specks = true;
	mc->specks_unconfirmed = true;
	return c->radius_small > 0;
}

/* The upsampled pass thresholds parts enlarged twice with Bernsen at
 * radius_up and gate_up, no median, the first scale's blur (a blurred
 * 1 px hole, enlarged, stands out from its blob by less than the first
 * scale's gate; at gate 8 noise in dim corners was read as a leaf of
 * another ID on the room preset); its matcher guards specks as the
 * small-symbol pass's and reads only symbols whose leaves of one colour
 * are of even areas (match.h): a 23 px symbol of reacTIVision's set, one
 * blob's hole lost and a fleck of its wall taken for a hole, read as
 * another ID (the small preset, 24 frames). It takes the bay rule too
 * (match.h bays), as the third scale's larger passes: where a hard
 * shadow's edge crosses a 32 px 1 of reacTIVision's set on the oblique
 * preset (seed 71, frame 11), the edge's band opened a three-hole blob's
 * hole into a bay and the pass read 48 there, nothing else reading the
 * place. Sizes: a part of THIRD_UP_SIDE pixels enlarged. False: off. */
static bool up_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc)
{
	*tc = c->thr;
	tc->mode = THRESHOLD_BERNSEN;
	tc->radius = c->radius_up < 1 ? 1 : c->radius_up > THIRD_UP_MAX_RADIUS ? THIRD_UP_MAX_RADIUS : c->radius_up;
	tc->median = 0;
	tc->max_width = tc->max_height = 2 * THIRD_UP_SIDE;
	engine_symbols_only(c, mc);
	tc->gate = c->gate_up;
	mc->few_specks = true;
	mc->even_leaves = true;
	mc->thin_walls = true;
	mc->bays = true;
	mc->max_width = mc->max_height = 2 * THIRD_UP_SIDE;
	mc->max_regions = 0;
	return c->radius_up > 0;
}

/* The upsampled pass's fine read (up_fine): its Bernsen threshold
 * (tc, up_configs) at THIRD_UP_FINE_RADIUS enlarged pixels. */
static void up_fine_config(const struct threshold_config *tc, struct threshold_config *fine)
{
	*fine = *tc;
	fine->radius = THIRD_UP_FINE_RADIUS;
}

/* The ink windows' and mean_up's small local mean (up_ink_part): Bernsen
 * gated by the local mean (tc, up_configs) at INK_UP_MEAN_RADIUS and
 * INK_UP_MEAN_BIAS. */
static void up_mean_config(const struct threshold_config *tc, struct threshold_config *mean)
{
	*mean = *tc;
	mean->mode = THRESHOLD_GATED;
	mean->mean_radius = INK_UP_MEAN_RADIUS;
	mean->mean_bias = INK_UP_MEAN_BIAS;
}

/* The check of the read three times enlarged (up_triple): its Bernsen
 * threshold (tc, up_configs) at UP_TRIPLE_CHECK_RADIUS. */
static void up_check3_config(const struct threshold_config *tc, struct threshold_config *check3)
{
	*check3 = *tc;
	check3->radius = UP_TRIPLE_CHECK_RADIUS;
}

int third_up_gate(struct engine *e, int gate)
{
	struct third *t = &e->t3;
	struct threshold_config tc, fine, check3, mean;
	struct match_config mc;
	if (!t->up || !up_configs(&e->cfg, &tc, &mc))
		return 0;
	const int configured = e->cfg.thr.gate;
	if (configured > 0 && gate > configured)
		tc.gate = (tc.gate * gate + configured / 2) / configured;
	up_fine_config(&tc, &fine);
	up_check3_config(&tc, &check3);
	up_mean_config(&tc, &mean);
	int err = threshold_set_config(t->up, &tc);
	if (!err)
		err = threshold_set_config(t->up_fine, &fine);
	if (!err && t->up3_check)
		err = threshold_set_config(t->up3_check, &check3);
	if (!err && t->up_mean)
		err = threshold_set_config(t->up_mean, &mean);
	return err;
}

/* The small-symbol and upsampled passes' symbols are read again
 * (small_check) at radius_small_check, Bernsen without a median, and
 * without the speck share: this read only vetoes, so what it may take for
 * noise costs no wrong ID. False: off (no check, or neither pass). */
bool third_check_configs(const struct engine_config *c, struct threshold_config *tc, struct match_config *mc)
{
	const bool on = (third_small_configs(c, tc, mc) || c->radius_up > 0) && c->radius_small_check > 0;
	tc->radius = c->radius_small_check;
	mc->few_specks = false;
	mc->specks_unconfirmed = false;
	return on;
}

/* The collected frame's whole-frame third-scale mask (GPU), waited for
 * where it is first needed: the third scale, or the next submit when that
 * comes first. Its kernels run behind both Bernsen scales' and their
 * labelling; waited for in engine_collect(), they held the first scale's
 * match back by their whole run. */
bool third_full(struct engine *e)
{
	if (e->t3.full_pending) {
		e->t3.full_pending = false;
		e->t3.have_full = threshold_collect_view(e->s3.thr, &e->t3.full) == 0;
	}
	return e->t3.have_full;
}

static void pass_job_free(struct pass_job *j)
{
	pool_destroy(j->pool);
	segment_destroy(j->seg);
	match_destroy(j->mat);
	bitmask_free(&j->crop);
	bitmask_free(&j->mask);
	detections_free(&j->det);
	detections_free(&j->out);
	memset(j, 0, sizeof *j);
}

/* A pass job's segmenter, matcher (mc), buffers and worker; frees what it
 * made on failure. */
static int pass_job_create(struct pass_job *j, const struct engine_config *c, const struct match_config *mc,
			   const struct match_config *frame_mc)
{
	const struct segment_config sc = engine_segment_config(c, frame_mc);
	int err = 0;
	j->seg = segment_create(&sc, &err);
	if (!err)
		j->mat = match_create(mc, &err);
	if (!err)
		err = bitmask_alloc(&j->crop, c->width, c->height);
	if (!err)
		err = bitmask_alloc(&j->mask, c->width, c->height);
	if (!err)
		err = detections_alloc(&j->det, c->max_detections);
	if (!err)
		err = detections_alloc(&j->out, c->max_detections);
	if (err) {
		pass_job_free(j);
		return err;
	}
	int perr;
	j->pool = pool_create(1, &perr);
	return 0;
}

static void ratio_free(struct ratio_job *j)
{
	pass_job_free(&j->job);
	closing_destroy(j->close);
	memset(j, 0, sizeof *j);
}

static void deblur_free(struct deblur_job *j)
{
	pass_job_free(&j->job);
	deblur_destroy(j->deblur);
	detections_free(&j->fewer);
	detections_free(&j->longer);
	pass_job_free(&j->frame);
	deblur_destroy(j->frame_deblur);
	memset(j, 0, sizeof *j);
}

/* Creates or frees the whole-frame read's buffers and worker: on with
 * defocus3, for frames of at most THIRD_DEBLUR_FRAME_MAX_PX. */
static int deblur_frame_sync(struct deblur_job *j, const struct engine_config *c, const struct match_config *mc)
{
	const bool on = c->defocus3 && (int64_t)c->width * c->height <= THIRD_DEBLUR_FRAME_MAX_PX;
	if (!on) {
		pass_job_free(&j->frame);
		deblur_destroy(j->frame_deblur);
		j->frame_deblur = NULL;
		j->next = 0.0f;
		return 0;
	}
	if (j->frame.mat)
		return match_set_config(j->frame.mat, mc);
	int err = 0;
	j->frame_deblur = deblur_create(c->width, c->height, &err);
	if (!err)
		err = pass_job_create(&j->frame, c, mc, mc);
	if (err) {
		deblur_destroy(j->frame_deblur);
		j->frame_deblur = NULL;
	}
	return err;
}

/* Creates, updates or frees the deblurring pass's buffers and worker (on:
 * deblur3 with mean_scale3 > 0, which gives its windows' radii); mc is the
 * third scale's match configuration. Without a worker the pass reads on
 * the calling thread. */
static int deblur_sync(struct deblur_job *j, const struct engine_config *c, const struct match_config *mc)
{
	if (!c->deblur3 || c->mean_scale3 <= 0.0f) {
		deblur_free(j);
		return 0;
	}
	/* Streaks run blobs together around pieces of the root
	 * (match_config.enclosed). A deconvolved window's dots spread into a
	 * blob beside them as an enlarged window's do (match_config.thin_walls,
	 * the upsampled pass): on the defocus preset (reacTIVision's set, seed
	 * 363, frame 18) the pass read a 26 of 57 px as 57, a dot joined to
	 * the six-hole blob around a piece of the root; over 106 sets of 16-24
	 * frames (about 22,000 symbols) and e2e_realistic's sets nothing else
	 * moved. */
	struct match_config m = *mc;
	m.enclosed = true;
	m.thin_walls = true;
	j->mc = m;
	int err = 0;
	if (j->job.mat) {
		err = match_set_config(j->job.mat, &m);
	} else {
		j->deblur = deblur_create(c->width, c->height, &err);
		if (!err)
			err = pass_job_create(&j->job, c, &m, mc);
		if (!err)
			err = detections_alloc(&j->fewer, c->max_detections);
		if (!err)
			err = detections_alloc(&j->longer, c->max_detections);
	}
	if (!err)
		err = deblur_frame_sync(j, c, mc);
	if (err)
		deblur_free(j);
	return err;
}

/* Creates, updates or frees the ratio pass's buffers and worker (on:
 * ratio3 > 0); mc is the third scale's match configuration. Without a
 * worker the pass reads on the calling thread. */
static int ratio_sync(struct ratio_job *j, const struct engine_config *c, const struct match_config *mc)
{
	if (c->ratio3 <= 0) {
		ratio_free(j);
		return 0;
	}
	struct match_config m = *mc;
	m.even_leaves = true;
	m.dot_max_elongation = THIRD_RATIO_DOT_ELONGATION;
	m.dot_max_area = THIRD_RATIO_DOT_AREA;
	m.dot_min_fill = THIRD_RATIO_DOT_FILL;
	m.doubtful = true;
	if (j->job.mat)
		return match_set_config(j->job.mat, &m);
	int err = 0;
	j->close = closing_create(c->width, c->height, &err);
	if (!err)
		err = pass_job_create(&j->job, c, &m, mc);
	if (err)
		ratio_free(j);
	return err;
}

/* Calls DESTROY on the pointer P and leaves P NULL. */
#define CLEAR(destroy, p) ((destroy)(p), (p) = NULL)

/* Frees the upsampled pass's thresholds, segmenter, matchers and buffers,
 * leaving their pointers NULL: up_sync() when the pass goes off, and
 * third_free(). */
static void up_free(struct third *t)
{
	CLEAR(threshold_destroy, t->up);
	CLEAR(threshold_destroy, t->up_fine);
	CLEAR(segment_destroy, t->up_seg);
	CLEAR(match_destroy, t->up_mat);
	CLEAR(closing_destroy, t->up_close);
	CLEAR(deblur_destroy, t->up_deblur);
	CLEAR(threshold_destroy, t->up_mean);
	CLEAR(threshold_destroy, t->up_sauvola);
	CLEAR(match_destroy, t->up3_mat);
	CLEAR(threshold_destroy, t->up3_check);
	CLEAR(free, t->up_rows);
	image_u8_free(&t->up_img);
	image_u8_free(&t->up_src);
	bitmask_free(&t->up_crop);
	bitmask_free(&t->up_win);
}

void third_free(struct engine *e)
{
	bitmask_free(&e->s3.mask);
	engine_scale_free(&e->s3);
	threshold_destroy(e->t3.cpu);
	threshold_destroy(e->t3.small);
	match_destroy(e->t3.small_mat);
	threshold_destroy(e->t3.check);
	match_destroy(e->t3.check_mat);
	closing_destroy(e->t3.close);
	up_free(&e->t3);
	free(e->t3.scratch);
	for (int i = 0; i < 2; i++) {
		free(e->t3.ink[i].b);
		free(e->t3.ink[i].lohi);
	}
	bitmask_free(&e->t3.crop);
	detections_free(&e->t3.det);
	ratio_free(&e->t3.ratio);
	deblur_free(&e->t3.deblur);
	memset(&e->t3, 0, sizeof e->t3);
}

/* Creates, updates or frees a CPU pass's threshold and matcher (the
 * small-symbol pass's, its check's). */
static int pass_sync(struct threshold **thr, struct match **mat, bool on, const struct threshold_config *tc,
		     const struct match_config *mc)
{
	if (!on) {
		threshold_destroy(*thr);
		match_destroy(*mat);
		*thr = NULL;
		*mat = NULL;
		return 0;
	}
	int err = 0;
	if (*thr)
		err = threshold_set_config(*thr, tc);
	else
		*thr = threshold_create(tc, "cpu", &err);
	if (!err && *mat)
		err = match_set_config(*mat, mc);
	else if (!err)
		*mat = match_create(mc, &err);
	return err;
}

/* Creates, updates or frees the upsampled pass's threshold, segmenter,
 * matcher and buffers (on: radius_up > 0). */
static int up_sync(struct engine *e, bool on, const struct threshold_config *tc, const struct match_config *mc)
{
	struct third *t = &e->t3;
	if (!on) {
		up_free(t);
		return 0;
	}
	const int side = 2 * THIRD_UP_SIDE;
	image_u8_gamma_lut(t->up_encode, 1.0 / INK_UP_ENCODE_GAMMA);
	struct threshold_config mean;
	up_mean_config(tc, &mean);
	struct threshold_config sauvola = *tc;
	sauvola.mode = THRESHOLD_SAUVOLA;
	sauvola.mean_radius = INK_UP_SAUVOLA_RADIUS;
	sauvola.sauvola_k = INK_UP_SAUVOLA_K;
	sauvola.sauvola_range = 128;
	sauvola.gate = INK_UP_SAUVOLA_GATE;
	struct threshold_config fine;
	up_fine_config(tc, &fine);
	struct threshold_config check3;
	up_check3_config(tc, &check3);
	struct match_config mc3 = *mc;
	mc3.moved_unconfirmed = true;
	if (t->up) {
		int err = threshold_set_config(t->up, tc);
		if (!err)
			err = threshold_set_config(t->up_fine, &fine);
		if (!err && e->cfg.close_up > 0 && !t->up_close)
			t->up_close = closing_create(side, side, &err);
		if (!err && t->up_mean)
			err = threshold_set_config(t->up_mean, &mean);
		else if (!err && (e->cfg.ink_up || e->cfg.mean_up))
			t->up_mean = threshold_create(&mean, "cpu", &err);
		if (!err && t->up_sauvola)
			err = threshold_set_config(t->up_sauvola, &sauvola);
		else if (!err && (e->cfg.ink_up || e->cfg.mean_up))
			t->up_sauvola = threshold_create(&sauvola, "cpu", &err);
		if (!err && t->up3_mat)
			err = match_set_config(t->up3_mat, &mc3);
		else if (!err && e->cfg.sharp_up)
			t->up3_mat = match_create(&mc3, &err);
		if (!err && t->up3_check)
			err = threshold_set_config(t->up3_check, &check3);
		else if (!err && e->cfg.sharp_up)
			t->up3_check = threshold_create(&check3, "cpu", &err);
		if (!err && e->cfg.rectify_up && !t->up_deblur)
			t->up_deblur = deblur_create(side, side, &err);
		return err ? err : match_set_config(t->up_mat, mc);
	}
	int adj = tree_set_max_nodes(mc->trees);
	struct segment_config sc = {.max_width = side, .max_height = side, .adj_cap = adj < 8 ? 8 : adj};
	int err = image_u8_alloc(&t->up_img, side, side);
	if (!err)
		err = image_u8_alloc(&t->up_src, side / 2 + 2 * UP_SHARPEN_MARGIN, side / 2 + 2 * UP_SHARPEN_MARGIN);
	const int rows = UPSAMPLE2_LANCZOS_ROWS > UPSAMPLE_SHARPEN_ROWS ? UPSAMPLE2_LANCZOS_ROWS : UPSAMPLE_SHARPEN_ROWS;
	if (!err && !(t->up_rows = malloc((size_t)rows * (size_t)side * sizeof *t->up_rows)))
		err = ERR_NOMEM;
	if (!err)
		err = bitmask_alloc(&t->up_crop, side, side);
	if (!err)
		err = bitmask_alloc(&t->up_win, side, side);
	if (!err)
		t->up = threshold_create(tc, "cpu", &err);
	if (!err)
		t->up_fine = threshold_create(&fine, "cpu", &err);
	if (!err)
		t->up_seg = segment_create(&sc, &err);
	if (!err)
		t->up_mat = match_create(mc, &err);
	if (!err && e->cfg.close_up > 0)
		t->up_close = closing_create(side, side, &err);
	if (!err && (e->cfg.ink_up || e->cfg.mean_up))
		t->up_mean = threshold_create(&mean, "cpu", &err);
	if (!err && (e->cfg.ink_up || e->cfg.mean_up))
		t->up_sauvola = threshold_create(&sauvola, "cpu", &err);
	if (!err && e->cfg.sharp_up)
		t->up3_mat = match_create(&mc3, &err);
	if (!err && e->cfg.sharp_up)
		t->up3_check = threshold_create(&check3, "cpu", &err);
	if (!err && e->cfg.rectify_up)
		t->up_deblur = deblur_create(side, side, &err);
	return err;
}

/* The small-symbol pass (on: radius_small > 0) and the check it shares
 * with the upsampled pass. */
static int small_sync(struct third *t, const struct engine_config *c)
{
	struct threshold_config tc;
	struct match_config mc;
	const bool on = third_small_configs(c, &tc, &mc);
	int err = pass_sync(&t->small, &t->small_mat, on, &tc, &mc);
	const bool check = third_check_configs(c, &tc, &mc);
	return err ? err : pass_sync(&t->check, &t->check_mat, check, &tc, &mc);
}

/* Creates or frees the third scale to follow scale3 (it is live). */
int third_scale_sync(struct engine *e)
{
	if (!e->cfg.scale3) {
		third_free(e);
		return 0;
	}
	struct threshold_config tc;
	struct match_config mc;
	third_configs(&e->cfg, &tc, &mc);
	struct threshold_config tcu;
	struct match_config mcu;
	const bool up = up_configs(&e->cfg, &tcu, &mcu);
	if (engine_scale_on(&e->s3)) {
		int err = threshold_set_config(e->s3.thr, &tc);
		if (!err && e->t3.cpu)
			err = threshold_set_config(e->t3.cpu, &tc);
		if (!err)
			err = small_sync(&e->t3, &e->cfg);
		if (!err)
			err = up_sync(e, up, &tcu, &mcu);
		if (!err)
			err = ratio_sync(&e->t3.ratio, &e->cfg, &mc);
		if (!err)
			err = deblur_sync(&e->t3.deblur, &e->cfg, &mc);
		e->t3.dot_vetoes = false;
		return err ? err : match_set_config(e->s3.mat, &mc);
	}
	/* On CUDA with the first scale (whole frames, cut into windows, where
	 * the last frame's windows were large; a CPU twin for the others), else
	 * on the CPU (windows only, chosen after the first scale is matched);
	 * segmented on the CPU either way, window by window. */
	struct engine_config c3 = e->cfg;
	c3.segment_backend = ENGINE_SEGMENT_CPU;
	const char *backend = strcmp(threshold_backend_name(e->s1.thr), "cuda") == 0 ? "cuda" : "cpu";
	int err = engine_scale_create(&e->s3, &c3, &tc, &mc, backend);
	e->t3.gpu = !err && strcmp(threshold_backend_name(e->s3.thr), "cuda") == 0;
	e->t3.want_full = e->t3.gpu;
	if (e->t3.gpu)
		e->t3.cpu = threshold_create(&tc, "cpu", &err);
	if (!err)
		err = small_sync(&e->t3, &e->cfg);
	if (!err)
		err = up_sync(e, up, &tcu, &mcu);
	if (!err) {
		/* Its mask is its own (threshold_process into it, windows cut into
		 * it), not a view of the thresholder's as for the other scales. */
		err = bitmask_alloc(&e->s3.mask, e->cfg.width, e->cfg.height);
		const int32_t regs = e->cfg.max_regions > 0 ? e->cfg.max_regions
							    : regions_region_capacity(e->cfg.width, e->cfg.height);
		e->t3.scratch_len = windows_scratch_len(e->cfg.width, e->cfg.height, regs);
		e->t3.scratch = malloc(e->t3.scratch_len * sizeof *e->t3.scratch);
		const size_t blocks = (size_t)windows_ink_blocks_cap(e->cfg.width, e->cfg.height);
		for (int i = 0; i < 2; i++) {
			e->t3.ink[i].b = malloc(blocks * sizeof *e->t3.ink[i].b);
			e->t3.ink[i].lohi = malloc(2 * blocks);
		}
		if (!err)
			err = e->t3.scratch && e->t3.ink[0].b && e->t3.ink[1].b && e->t3.ink[0].lohi && e->t3.ink[1].lohi
				      ? bitmask_alloc(&e->t3.crop, e->cfg.width, e->cfg.height)
				      : ERR_NOMEM;
		if (!err)
			err = detections_alloc(&e->t3.det, e->cfg.max_detections);
		if (!err)
			e->t3.close = closing_create(e->cfg.width, e->cfg.height, &err);
		if (!err)
			err = closing_median_on(e->t3.close);
		if (!err)
			err = ratio_sync(&e->t3.ratio, &e->cfg, &mc);
		if (!err)
			err = deblur_sync(&e->t3.deblur, &e->cfg, &mc);
		if (err)
			third_free(e);
	}
	if (err)
		log_error("third threshold scale not available: %s", err_str(err));
	return err;
}

/* Whether the third scale reads ink (windows_ink) this frame. */
bool third_ink_on(const struct engine *e)
{
	return engine_scale_on(&e->s3) && e->cfg.close_scale3 > 0.0f && e->t3.close;
}

/* k = grey's ink blocks at gate. */
void third_ink_find(struct ink_blocks *k, const struct image_u8 *grey, int gate)
{
	threshold_block_extremes_cpu(grey, k->lohi);
	k->n = windows_ink_blocks(k->lohi, grey->width, grey->height, gate, k->b);
	k->grey = grey->data;
	k->gate = gate;
}

/* k = the ink blocks of the frame just collected, from the extremes its
 * first scale's GPU threshold found beside the mask (asked for at
 * submit); where they did not come (the GPU fell back to the CPU), k
 * stays empty and the third scale scans the grey itself. */
void third_ink_collect(struct engine *e, struct ink_blocks *k)
{
	const uint8_t *lohi;
	if (!k->gpu_grey)
		return;
	if (threshold_extremes(e->s1.thr, &lohi) == 0) {
		k->n = windows_ink_blocks(lohi, e->cfg.width, e->cfg.height, e->gate_submitted, k->b);
		k->grey = k->gpu_grey;
		k->gate = e->gate_submitted;
	}
	k->gpu_grey = NULL;
}

/* Pixels around a window that threshold configuration tc reads: the
 * windows of the method and of the prefilters. Tiled thresholds depend on
 * the tile grid's origin: -1, whole frames only. */
static int halo_of(const struct threshold_config *tc)
{
	if (tc->mode == THRESHOLD_TILED)
		return -1;
	int taps[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	int r = tc->mode == THRESHOLD_BERNSEN ? tc->radius
	      : tc->mode == THRESHOLD_MEAN || tc->mode == THRESHOLD_SAUVOLA ? tc->mean_radius
	      : tc->radius > tc->mean_radius ? tc->radius : tc->mean_radius;
	return r + tc->median / 2 + threshold_gauss_taps(tc->gauss_sigma, taps);
}

/* The third scale's halo at local-mean radius mean_radius. */
static int third_halo(const struct engine_config *c, int mean_radius)
{
	struct threshold_config tc = c->thr;
	tc.mode = c->mode3;
	tc.mean_radius = mean_radius;
	return halo_of(&tc);
}

/* dst (its size set) = the bits of src from column ox, row oy on. */
static void bits_cut(const struct bitmask *src, int ox, int oy, struct bitmask *dst)
{
	const int q0 = ox / 64, s = ox % 64, nw = dst->stride_words;
	const uint64_t last = dst->width % 64 ? (1ull << (dst->width % 64)) - 1 : ~0ull;
	for (int y = 0; y < dst->height; y++) {
		const uint64_t *a = bitmask_row(src, y + oy) + q0;
		uint64_t *o = dst->bits + (size_t)y * (size_t)nw;
		const int left = src->stride_words - q0;
		for (int j = 0; j < nw; j++) {
			uint64_t v = a[j] >> s;
			if (s && j + 1 < left)
				v |= a[j + 1] << (64 - s);
			o[j] = v;
		}
		o[nw - 1] &= last;
	}
}

/* How third_window() thresholds: by thr, by the closing at close_pct (at
 * the window's radius), by that closing again at THIRD_INK_PCT_LESS
 * points under close_pct (closing_again: right after the window's read
 * at close_pct), or by the closing of the grey's 3 x 3 median at
 * close_pct with the frame's gate at close_dark percent. */
enum { THIRD_BY_THR, THIRD_BY_CLOSING, THIRD_BY_CLOSING_LESS, THIRD_BY_CLOSING_DARK };
/* fiducial_det.completed of a fallback that a later fallback pass read as
 * another ID, while fallback_reads() takes it out. */
#define THIRD_CONTESTED 100

/* A window w of the frame with halo pixels around it (cut at the frame's
 * edge): the grey view a threshold reads (from cx0, cy0), its mask in the
 * third scale's crop buffer, and w's own mask in the scale's mask buffer
 * (the crop's bits from w's corner, bits_cut). */
struct window_cut {
	struct image_u8 view;
	struct bitmask crop, win;
	int cx0, cy0;
};

/* The same into the buffers crop and win (frame-sized bitmasks). */
static struct window_cut window_cut_into(const struct image_u8 *grey, const struct window *w, int halo,
					 const struct bitmask *crop, const struct bitmask *win)
{
	struct window_cut k = {.crop = *crop, .win = *win};
	k.cx0 = w->x0 - halo > 0 ? w->x0 - halo : 0;
	k.cy0 = w->y0 - halo > 0 ? w->y0 - halo : 0;
	const int cx1 = w->x1 + halo < grey->width ? w->x1 + halo : grey->width;
	const int cy1 = w->y1 + halo < grey->height ? w->y1 + halo : grey->height;
	k.view = (struct image_u8){.width = cx1 - k.cx0, .height = cy1 - k.cy0, .stride = grey->stride,
				   .data = grey->data + (size_t)k.cy0 * (size_t)grey->stride + (size_t)k.cx0};
	k.crop.width = k.view.width;
	k.crop.height = k.view.height;
	k.crop.stride_words = (k.crop.width + 63) / 64;
	k.win.width = w->x1 - w->x0;
	k.win.height = w->y1 - w->y0;
	k.win.stride_words = (k.win.width + 63) / 64;
	return k;
}

static struct window_cut window_cut(struct engine *e, const struct image_u8 *grey, const struct window *w, int halo)
{
	return window_cut_into(grey, w, halo, &e->t3.crop, &e->s3.mask);
}

/* w's bits cut out of k's thresholded crop into k's window mask. */
static void cut_crop(struct window_cut *k, const struct window *w)
{
	bits_cut(&k->crop, w->x0 - k->cx0, w->y0 - k->cy0, &k->win);
}

/* k's window mask segmented by seg and matched by mat into det (cleared
 * first; positions in the window's coordinates). */
static bool decode_window(struct segment *seg, struct match *mat, const struct window_cut *k, struct detections *det)
{
	const struct region_tree *tree = NULL;
	detections_clear(det);
	return segment_process(seg, &k->win, &tree) == 0 && match_process(mat, tree, NULL, det) == 0;
}

/* Appends f to d's symbols (fid) or fuzzy symbols; a full list sets
 * overflow instead. */
static void det_append(struct detections *d, bool fid, const struct fiducial_det *f)
{
	int32_t *n = fid ? &d->n_fids : &d->n_fuzzy;
	if (*n >= (fid ? d->cap_fids : d->cap_fuzzy))
		d->overflow = true;
	else
		(fid ? d->fids : d->fuzzy)[(*n)++] = *f;
}

/* Appends a window's symbols and fuzzy symbols (det) to d in frame
 * coordinates, as merged ones (root -1): with rule, only those whose own
 * radius by the rule is within THIRD_SCALED_TOLERANCE of the window's; with
 * max_px > 0 only those of at most max_px; with completed >= 0 marked so
 * (fiducial_det.completed). */
static void window_keep(struct detections *d, const struct detections *det, const struct window *w,
			const struct windows_radius *rule, int max_px, int completed)
{
	for (int i = 0; i < det->n_fids + det->n_fuzzy; i++) {
		const bool fid = i < det->n_fids;
		struct fiducial_det f = fid ? det->fids[i] : det->fuzzy[i - det->n_fids];
		if (rule && abs(windows_radius(rule, (int)(f.size_px + 0.5f)) - w->radius) > THIRD_SCALED_TOLERANCE)
			continue;
		if (max_px > 0 && f.size_px > (float)max_px)
			continue;
		f.x += (float)w->x0;
		f.y += (float)w->y0;
		f.root = -1;
		if (completed >= 0)
			f.completed = completed;
		det_append(d, fid, &f);
	}
}

/* One window of the third scale: thresholded with its halo, cut out,
 * segmented and matched; its symbols appended to the scale's detections
 * (window_keep(), rule and max_px as there). by: THIRD_BY_*. */
static bool third_window(struct engine *e, const struct image_u8 *grey, const struct window *w, int halo,
			 struct threshold *thr, const struct windows_radius *rule, int max_px, int by)
{
	struct third *t = &e->t3;
	struct window_cut k = window_cut(e, grey, w, halo);
	/* The whole-frame mask is at the configured radius: a window of the
	 * second pass (rule) has a radius of its own and is thresholded here. */
	if (by == THIRD_BY_CLOSING) {
		if (closing_process(t->close, &k.view, w->radius, e->cfg.close_pct, e->gate, &k.crop))
			return false;
		cut_crop(&k, w);
	} else if (by == THIRD_BY_CLOSING_DARK) {
		const int gate = (e->gate * e->cfg.close_dark + 50) / 100;
		if (closing_median(t->close, &k.view, w->radius, e->cfg.close_pct, gate, &k.crop))
			return false;
		cut_crop(&k, w);
	} else if (by == THIRD_BY_CLOSING_LESS) {
		const int pct = e->cfg.close_pct > THIRD_INK_PCT_LESS ? e->cfg.close_pct - THIRD_INK_PCT_LESS : 0;
		if (closing_again(t->close, &k.view, pct, e->gate, &k.crop))
			return false;
		cut_crop(&k, w);
	} else if (t->have_full && !rule && thr != t->small) {
		bits_cut(&t->full, w->x0, w->y0, &k.win);
	} else {
		if (threshold_process(thr, &k.view, &k.crop))
			return false;
		cut_crop(&k, w);
	}
	struct match *mat = thr && thr == t->small ? t->small_mat : e->s3.mat;
	if (!decode_window(e->s3.seg, mat, &k, &t->det))
		return false;
	window_keep(&e->s3.det, &t->det, w, rule, max_px, -1);
	return true;
}

static bool third_match_vetoes(struct engine *e, bool on);
static void pass_vetoes(struct detections *d, int from);
static bool third_scaled(struct engine *e, const struct image_u8 *grey, struct threshold *thr);
static bool small_check(struct engine *e, const struct image_u8 *grey, int from, float max_px);
static bool third_closed(struct engine *e, const struct image_u8 *grey);
static void ratio_start(struct engine *e, const struct image_u8 *grey, int n);
static bool ratio_finish(struct engine *e);
static bool third_small(struct engine *e, const struct image_u8 *grey);
static void deblur_start(struct engine *e, const struct image_u8 *grey);
static bool deblur_finish(struct engine *e);
static bool third_up(struct engine *e, const struct image_u8 *grey);

/* The third scale, in the windows where it may add a symbol to the first
 * scale's (windows.h, from the first scale's tree1), or over the whole
 * frame; then its second pass (third_scaled). Both read with the dot
 * vetoes (third_match_vetoes), each pass's vetoes within its own reads. */
bool third_detect(struct engine *e, const struct image_u8 *grey, const struct region_tree *tree1)
{
	const int halo = third_halo(&e->cfg, e->cfg.thr.mean_radius);
	const int max_px = e->cfg.match.root_max_px > 0 ? (int)e->cfg.match.root_max_px : grey->width + grey->height;
	windows_scan(&e->t3.scan, tree1, &e->s1.det, max_px, THIRD_UP_WIN_PX, grey, e->gate / THIRD_SMALL_SD_DIV,
		     e->t3.scratch, e->t3.scratch_len);
	/* The rim of specks around a bright blob or hand is the local mean's
	 * gate line, about its window from the blob's edge (windows_blobs): a
	 * first scale that paints windows darker on average than the gate
	 * black (threshold.h) draws it; Bernsen's flat rule draws none, and
	 * there blobs (paper between shadows) hold symbols whose rings joined
	 * the dark around them, which islands are for. */
	const struct threshold_config *t1 = &e->cfg.thr;
	if (t1->mode == THRESHOLD_MEAN || t1->mode == THRESHOLD_SAUVOLA)
		windows_blobs(&e->t3.scan, t1->mean_radius);
	if (third_ink_on(e)) {
		/* Found at submit, unless the frame is not the one submitted or
		 * the third scale came on since. */
		struct ink_blocks *k = &e->t3.ink[e->t3.ink_cur];
		if (k->grey != grey->data || k->gate != e->gate)
			third_ink_find(k, grey, e->gate);
		windows_ink(&e->t3.scan, e->cfg.thr.radius, k->b, k->n);
	}
	/* The first pass's windows, which the ratio pass reads too whatever
	 * the first pass's method (a tiled one reads whole frames). */
	const int found = windows_find(&e->t3.scan, THIRD_PAD, NULL, e->t3.win, THIRD_MAX_WINDOWS);
	int n = halo < 0 ? -1 : found;
	const int64_t frame_px = (int64_t)grey->width * grey->height;
	int64_t area = n < 0 ? frame_px : 0;
	for (int i = 0; i < n; i++)
		area += (int64_t)(e->t3.win[i].x1 - e->t3.win[i].x0) * (e->t3.win[i].y1 - e->t3.win[i].y0);
	struct engine_third_stats *st = &e->t3.stats;
	st->frames++;
	st->whole_frames += n < 0;
	st->windows += n > 0 ? n : 0;
	st->area_px += area;
	e->t3.want_full = e->t3.gpu && 8 * area > frame_px;
	/* Before the passes' jobs start: they read have_full. */
	third_full(e);
	struct threshold *thr = e->t3.cpu ? e->t3.cpu : e->s3.thr;
	detections_clear(&e->s3.det);
	ratio_start(e, grey, found);
	deblur_start(e, grey);
	bool ok = third_match_vetoes(e, true);
	if (n < 0 && e->t3.have_full) {
		const struct bitmask own = e->s3.mask;
		e->s3.mask = e->t3.full;
		ok = engine_scale_detect(&e->s3, grey);
		e->s3.mask = own;
	} else if (n < 0) {
		ok = threshold_process(thr, grey, &e->s3.mask) == 0 && engine_scale_detect(&e->s3, grey);
	} else {
		for (int i = 0; i < n && ok; i++)
			ok = third_window(e, grey, &e->t3.win[i], halo, thr, NULL, 0, THIRD_BY_THR);
	}
	pass_vetoes(&e->s3.det, 0);
	ok = ok && third_scaled(e, grey, thr);
	/* The local mean's reads of small symbols face the small-symbol
	 * pass's doubts (check3): at 24-28 px a blob's 1-2 px hole closes
	 * and a speck passes for a dot as readily under the local mean. */
	if (e->cfg.check3)
		ok = ok && small_check(e, grey, 0, (float)THIRD_SMALL_MAX_PX);
	ok = third_match_vetoes(e, false) && ok && third_closed(e, grey);
	/* Always waited for: the jobs read grey until done. */
	ok = ratio_finish(e) && ok;
	ok = ok && third_small(e, grey) && third_up(e, grey);
	return deblur_finish(e) && ok;
}

/* d's symbols from `from` on (one pass's or one rung's) after their
 * vetoes (merge_vetoes, within those reads). */
static void pass_vetoes(struct detections *d, int from)
{
	struct detections pass = *d;
	pass.fids = d->fids + from;
	pass.n_fids = d->n_fids - from;
	pass.cap_fids = d->cap_fids - from;
	merge_vetoes(&pass);
	d->n_fids = from + pass.n_fids;
	d->n_fuzzy = pass.n_fuzzy;
}

/* d's symbols from `from` on (one rung's) as fallbacks (FIDUCIAL_FALLBACK):
 * whole trees only, after their vetoes (pass_vetoes, within the rung). */
static void scaled_fallbacks(struct detections *d, int from)
{
	pass_vetoes(d, from);
	int k = from;
	for (int i = from; i < d->n_fids; i++) {
		if (d->fids[i].completed)
			continue;
		d->fids[k] = d->fids[i];
		d->fids[k++].completed = FIDUCIAL_FALLBACK;
	}
	d->n_fids = k;
}

/* The third scale's matcher with the ratio pass's dot vetoes
 * (THIRD_RATIO_DOT_*; on: its first and scaled passes) or without (the
 * others).
 * Set only when it changes. */
static bool third_match_vetoes(struct engine *e, bool on)
{
	if (e->t3.dot_vetoes == on)
		return true;
	struct threshold_config tc;
	struct match_config mc;
	third_configs(&e->cfg, &tc, &mc);
	if (on) {
		mc.dot_max_elongation = THIRD_RATIO_DOT_ELONGATION;
		mc.dot_max_area = THIRD_RATIO_DOT_AREA;
	}
	e->t3.dot_vetoes = on;
	return match_set_config(e->s3.mat, &mc) == 0;
}

/* The third scale's second pass (mean_scale3): in windows, each at the
 * local-mean radius its symbols' size asks for (windows.h), thresholded on
 * the CPU whatever the first pass's backend (so both give the same bits),
 * skipping windows whose radius is the configured one (the first pass had
 * them), and keeping only symbols whose own size asks for the window's
 * radius (within THIRD_SCALED_TOLERANCE): a symbol read at a radius not
 * its own (a 70 px symbol, its root merged with the shadow's edge, read at
 * the radius of a 110 px neighbour's window) read as another ID. Its
 * symbols follow the first pass's in the scale's detections, so where the
 * two passes find one symbol the configured radius's stands.
 * A window's radius is that of its largest branching region, often a
 * neighbour's larger root: a 59 px symbol in a hard shadow beside a 66 px
 * one read at radius 5-6 and not at 7-8, where the sunlit paper's edge
 * pulled the mean over its shadowed paper. So, as the closing pass does,
 * each window is read again down a ladder of radii THIRD_SCALED_STEP
 * apart (each keeping the symbols its tolerance takes) to the smallest;
 * each rung's vetoes hold within its reads (pass_vetoes), and a
 * lower rung's reads are whole trees only and fallbacks
 * (FIDUCIAL_FALLBACK: standing only where no other read holds the place;
 * merge.h), since a smaller radius also breaks walls another pass reads
 * whole. */
static bool third_scaled(struct engine *e, const struct image_u8 *grey, struct threshold *thr)
{
	const struct engine_config *c = &e->cfg;
	if (c->mean_scale3 <= 0.0f || c->mode3 == THRESHOLD_BERNSEN || c->mode3 == THRESHOLD_TILED)
		return true;
	const struct windows_radius rule = {c->mean_scale3, THIRD_SCALED_MIN_RADIUS, THIRD_SCALED_MAX_RADIUS};
	int n = windows_find(&e->t3.scan, THIRD_PAD, &rule, e->t3.win, THIRD_MAX_WINDOWS);
	struct threshold_config tc = c->thr;
	tc.mode = c->mode3;
	const int gate = engine_gate_of_mode(tc.mode, c->thr.gate, e->gate);
	const bool gate_is_floor = tc.mode == THRESHOLD_MEAN || tc.mode == THRESHOLD_SAUVOLA;
	const int first_gate = gate_is_floor && gate > THIRD_SCALED_DARK_FLOOR ? THIRD_SCALED_DARK_FLOOR : gate;
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		struct window w = e->t3.win[i];
		for (;;) {
			if (w.radius != c->thr.mean_radius) {
				const int from = e->s3.det.n_fids;
				tc.mean_radius = w.radius;
				tc.gate = w.radius == e->t3.win[i].radius ? first_gate : gate;
				e->t3.stats.scaled_windows++;
				e->t3.stats.scaled_area_px += (int64_t)(w.x1 - w.x0) * (w.y1 - w.y0);
				ok = threshold_set_config(thr, &tc) == 0 &&
				     third_window(e, grey, &w, third_halo(c, w.radius), thr, &rule, 0, THIRD_BY_THR);
				if (w.radius != e->t3.win[i].radius)
					scaled_fallbacks(&e->s3.det, from);
				else
					pass_vetoes(&e->s3.det, from);
			}
			const int next = w.radius - THIRD_SCALED_STEP;
			if (!ok || w.radius <= THIRD_SCALED_MIN_RADIUS || next + THIRD_SCALED_TOLERANCE < THIRD_SCALED_MIN_RADIUS)
				break;
			w.radius = next > THIRD_SCALED_MIN_RADIUS ? next : THIRD_SCALED_MIN_RADIUS;
		}
	}
	tc.mean_radius = c->thr.mean_radius;
	tc.gate = gate;
	return threshold_set_config(thr, &tc) == 0 && ok;
}

/* The square of half side r around (fx, fy), cut at grey's edges. */
static struct window square_around(const struct image_u8 *grey, int fx, int fy, int r)
{
	return (struct window){.x0 = fx - r > 0 ? fx - r : 0, .y0 = fy - r > 0 ? fy - r : 0,
			       .x1 = fx + r + 1 < grey->width ? fx + r + 1 : grey->width,
			       .y1 = fy + r + 1 < grey->height ? fy + r + 1 : grey->height};
}

/* Reads the square of half side r around (fx, fy) (cut at the frame's
 * edge) again: thresholded by thr with halo pixels around it, cut out,
 * segmented (the third scale's segmenter) and matched by mat into
 * e->t3.det, positions in frame coordinates. For the checks of single
 * symbols (small_check, third_tie_break). */
static bool reread(struct engine *e, const struct image_u8 *grey, int fx, int fy, int r, int halo,
		   struct threshold *thr, struct match *mat)
{
	struct third *t = &e->t3;
	const struct window w = square_around(grey, fx, fy, r);
	const int x0 = w.x0, y0 = w.y0;
	struct window_cut k = window_cut(e, grey, &w, halo);
	if (threshold_process(thr, &k.view, &k.crop))
		return false;
	cut_crop(&k, &w);
	if (!decode_window(e->s3.seg, mat, &k, &t->det))
		return false;
	for (int i = 0; i < t->det.n_fids; i++) {
		t->det.fids[i].x += (float)x0;
		t->det.fids[i].y += (float)y0;
	}
	return true;
}

static bool sharp_check(struct engine *e, const struct image_u8 *grey, const struct window *w, int i, bool *ok);

/* The check of the small-symbol and upsampled passes (and, with check3,
 * of the local mean's small reads): each of a pass's symbols (d->fids
 * from `from` on; with max_px > 0 only those of at most max_px) is read
 * again in a window around it at radius_small_check, and merge_check()
 * turns it fuzzy where that read gives another ID; then, with sharp_up,
 * where its Lanczos read does (sharp_check; not a fallback's, nor one
 * over THIRD_SMALL_MAX_PX). */
static bool small_check(struct engine *e, const struct image_u8 *grey, int from, float max_px)
{
	struct third *t = &e->t3;
	if (!t->check)
		return true;
	int taps[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	const int halo = e->cfg.radius_small_check + threshold_gauss_taps(e->cfg.thr.gauss_sigma, taps);
	struct detections *d = &e->s3.det;
	for (int i = from; i < d->n_fids;) {
		if (max_px > 0.0f && d->fids[i].size_px > max_px) {
			i++;
			continue;
		}
		const int r = (int)d->fids[i].size_px + THIRD_SMALL_CHECK_PAD, fx = (int)d->fids[i].x,
			  fy = (int)d->fids[i].y;
		if (!reread(e, grey, fx, fy, r, halo, t->check, t->check_mat))
			return false;
		if (merge_check(d, i, &t->det, e->cfg.match.trees))
			continue;
		const struct window w = square_around(grey, fx, fy, r);
		bool ok = true;
		if (t->up && e->cfg.sharp_up && d->fids[i].completed != FIDUCIAL_FALLBACK &&
		    d->fids[i].size_px <= (float)THIRD_SMALL_MAX_PX && sharp_check(e, grey, &w, i, &ok))
			continue;
		if (!ok)
			return false;
		i++;
	}
	return true;
}

/* Where the second scale read another whole ID at the place of a whole
 * symbol of the first's (merge.h, merge_tie_break), the place is read a
 * third time with the third scale's threshold (the local mean, on the
 * CPU) in a window around the symbol. Runs only at such places: none on
 * most frames. */
bool third_tie_break(struct engine *e, const struct image_u8 *grey)
{
	struct third *t = &e->t3;
	struct threshold *thr = t->cpu ? t->cpu : e->s3.thr;
	const int halo = third_halo(&e->cfg, e->cfg.thr.mean_radius);
	if (halo < 0 || strcmp(threshold_backend_name(thr), "cpu") != 0)
		return true;
	struct detections *d = &e->s1.det;
	for (int i = 0; i < d->n_fids; i++) {
		const struct fiducial_det *f = &d->fids[i];
		const int k = merge_near(e->s2.det.fids, e->s2.det.n_fids, f);
		const struct fiducial_det *other = k >= 0 ? &e->s2.det.fids[k] : NULL;
		if (f->root < 0 || f->completed || !other || other->id == f->id || other->completed)
			continue;
		const int r = (int)f->size_px + TIE_PAD, fx = (int)f->x, fy = (int)f->y;
		if (!reread(e, grey, fx, fy, r, halo, thr, e->s3.mat))
			return false;
		merge_tie_break(d, i, other, &t->det);
	}
	return true;
}

/* Whether no symbol of d reads f's ID at f's place (within 0.3 of the
 * larger size of the two). */
static bool lone_in(const struct detections *d, const struct fiducial_det *f)
{
	for (int j = 0; d && j < d->n_fids; j++)
		if (d->fids[j].id == f->id && merge_near(&d->fids[j], 1, f) == 0)
			return false;
	return true;
}

/* check1: each whole symbol of the first scale's that no other scale or
 * pass reads at its place (lone in d2, the second scale's, and in the
 * third's) is read again around it, its size each way plus TIE_PAD, with
 * the first scale's threshold at its radius + 1 and the frame's gate (on
 * the third scale's CPU threshold, set back after), and becomes fuzzy
 * where that read gives another ID there (merge_check). A wrong ID of the
 * first scale is most often such a lone read: on motion streaks a blob's
 * hole that moved, under JPEG two holes moved at once; one radius more
 * reads the damage as another tree. On the survey and held-out
 * collections (docs/recognition.md, "The first scale's lone reads") no
 * right read was so contradicted. */
bool third_lone_check(struct engine *e, const struct image_u8 *grey, const struct detections *d2)
{
	const struct engine_config *c = &e->cfg;
	struct third *t = &e->t3;
	struct threshold *thr = t->cpu ? t->cpu : e->s3.thr;
	if (!c->check1 || strcmp(threshold_backend_name(thr), "cpu") != 0)
		return true;
	struct threshold_config tc = c->thr;
	tc.radius = tc.radius < THRESHOLD_MAX_RADIUS ? tc.radius + 1 : tc.radius;
	tc.mean_radius = tc.mean_radius < THRESHOLD_MAX_MEAN_RADIUS ? tc.mean_radius + 1 : tc.mean_radius;
	tc.gate = engine_gate_of_mode(tc.mode, c->thr.gate, e->gate);
	const int halo = halo_of(&tc);
	if (halo < 0)
		return true;
	bool set = false, ok = true;
	struct detections *d = &e->s1.det;
	for (int i = 0; i < d->n_fids && ok;) {
		const struct fiducial_det *f = &d->fids[i];
		if (f->root < 0 || f->completed || !lone_in(d2, f) || !lone_in(&e->s3.det, f)) {
			i++;
			continue;
		}
		ok = (set || threshold_set_config(thr, &tc) == 0) &&
		     reread(e, grey, (int)f->x, (int)f->y, (int)f->size_px + TIE_PAD, halo, thr, e->s3.mat);
		set = true;
		if (ok && !merge_check(d, i, &t->det, c->match.trees))
			i++;
	}
	if (!set)
		return ok;
	struct match_config mc;
	third_configs(c, &tc, &mc);
	tc.gate = engine_gate_of_mode(tc.mode, c->thr.gate, e->gate);
	return threshold_set_config(thr, &tc) == 0 && ok;
}

/* The n windows a find put into e->t3.win, or (n < 0) the whole frame
 * as one window there; returns their number. */
static int windows_or_frame(struct engine *e, const struct image_u8 *grey, int n)
{
	if (n >= 0)
		return n;
	e->t3.win[0] = (struct window){.x0 = 0, .y0 = 0, .x1 = grey->width, .y1 = grey->height};
	return 1;
}

/* How a box of the frame is enlarged (upsample.h): twice, bilinear or
 * by Lanczos-3, or three times by Lanczos-3. */
enum up_kind { UP_BILINEAR, UP_LANCZOS, UP_LANCZOS3 };

/* A box of the frame enlarged k times (upsample.h) in the upsampled pass's
 * buffers: the enlarged image, its mask and the box's cut of the mask,
 * the origin of the enlarged part in the frame, and k. */
struct up_view {
	struct image_u8 up;
	struct bitmask crop, win;
	int x0, y0, k;
};

static bool up_enlarge(struct engine *e, const struct image_u8 *grey, const struct window *ext, int halo,
		       enum up_kind kind, struct up_view *v);
static bool up_decode(struct engine *e, struct up_view *v, const struct window *ext, const struct region_tree **tree);
static bool up_decode_runs(struct engine *e, struct up_view *v, const struct window *ext, int64_t max_runs,
			   const struct region_tree **tree, bool *read);
static int up_halo(const struct engine *e);

/* The small-symbol pass's unconfirmed reads (d->fids from `from` on with
 * FIDUCIAL_UNCONFIRMED, match.h specks_unconfirmed; also the ink
 * windows' reads over INK_UP_WHOLE_PX, up_ink_part): each place is read
 * again in the frame enlarged twice by the upsampled pass's Bernsen
 * threshold and matcher, in a window reaching the read's size plus
 * THIRD_SMALL_CHECK_PAD past its centre each way (as its check), and
 * merge_confirm() keeps the read where the tree of the symbol or fuzzy
 * symbol read there nearest its centre (within 0.3 of its size) is its
 * ID's less a node or two; without the upsampled pass none stands. With
 * record, the reads not confirmed are kept in e->t3.failed for
 * merge_contradicted() (third_up). */
static bool small_confirm(struct engine *e, const struct image_u8 *grey, int from, bool record)
{
	struct third *t = &e->t3;
	struct detections *d = &e->s3.det;
	const int halo = t->up ? up_halo(e) : 0;
	for (int i = from; i < d->n_fids;) {
		const struct fiducial_det *f = &d->fids[i];
		if (f->completed != FIDUCIAL_UNCONFIRMED) {
			i++;
			continue;
		}
		char buf[TREES_MAX_NODES + 2];
		const char *canon = NULL;
		if (t->up) {
			const struct window w =
				square_around(grey, (int)f->x, (int)f->y, (int)f->size_px + THIRD_SMALL_CHECK_PAD);
			struct up_view v;
			const struct region_tree *tree = NULL;
			if (!up_enlarge(e, grey, &w, halo, UP_BILINEAR, &v) || threshold_process(t->up, &v.up, &v.crop) ||
			    !up_decode(e, &v, &w, &tree))
				return false;
			/* Enlarged pixel x lies at x / 2 - 0.25 in the frame (upsample.h). */
			const float ex = 2.0f * (f->x - (float)w.x0) + 0.5f, ey = 2.0f * (f->y - (float)w.y0) + 0.5f;
			const float reach = 0.3f * 2.0f * f->size_px;
			float best = reach * reach;
			int32_t root = -1;
			for (int k = 0; k < t->det.n_fids + t->det.n_fuzzy; k++) {
				const struct fiducial_det *g =
					k < t->det.n_fids ? &t->det.fids[k] : &t->det.fuzzy[k - t->det.n_fids];
				const float dx = g->x - ex, dy = g->y - ey;
				if (g->root >= 0 && dx * dx + dy * dy <= best) {
					best = dx * dx + dy * dy;
					root = g->root;
				}
			}
			if (root >= 0 && match_canonical_string(tree, root, -1, buf, sizeof buf) > 0)
				canon = buf;
		}
		const struct fiducial_det read = *f;
		if (!merge_confirm(d, i, canon, e->cfg.match.trees))
			i++;
		else if (record && t->n_failed < UP_FAILED_MAX)
			t->failed[t->n_failed++] = read;
	}
	return true;
}

/* The third scale's small-symbol pass (radius_small): Bernsen at a small
 * radius without a median, in windows around small structure that no
 * decoded symbol explains (windows_find_small; the whole frame where they
 * would cover more than half of it), keeping symbols of at most
 * THIRD_SMALL_MAX_PX. The first scale's radius and the second's median
 * lose the 1-2 px holes and walls of symbols under about 30 px; these
 * symbols follow the other passes' in the scale's detections. */
static bool third_small(struct engine *e, const struct image_u8 *grey)
{
	if (!e->t3.small)
		return true;
	/* The windows around small structure (regions under
	 * THIRD_SMALL_WIN_PX) that no decoded symbol explains and whose grey
	 * varies by at least the gate over THIRD_SMALL_SD_DIV, or the whole
	 * frame where they would cover more than half of it. */
	const int found = windows_find_small(&e->t3.scan, THIRD_SMALL_WIN_PX, THIRD_SMALL_PAD, e->t3.win,
					     THIRD_MAX_WINDOWS);
	const int n = windows_or_frame(e, grey, found);
	int taps[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	const int halo = e->cfg.radius_small + threshold_gauss_taps(e->cfg.thr.gauss_sigma, taps);
	const int from = e->s3.det.n_fids;
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		const struct window *w = &e->t3.win[i];
		e->t3.stats.small_windows++;
		e->t3.stats.small_area_px += (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		ok = third_window(e, grey, w, halo, e->t3.small, NULL, THIRD_SMALL_MAX_PX, THIRD_BY_THR);
	}
	return ok && small_confirm(e, grey, from, false) && small_check(e, grey, from, 0.0f);
}

/* The box ext of the frame enlarged with halo pixels around it (clamped
 * to the frame) into v, as kind says (upsample.h), from src, whose pixel
 * (0, 0) is the frame's (ox, oy) and which holds every pixel the
 * enlargement reads (the frame itself, or its part up_enlarge_sharpened()
 * sharpened). False: the enlarging failed (a part past the buffers: three
 * times only a place's window). */
static bool up_enlarge_from(struct engine *e, const struct image_u8 *grey, const struct image_u8 *src, int ox,
			    int oy, const struct window *ext, int halo, enum up_kind kind, struct up_view *v)
{
	struct third *t = &e->t3;
	v->k = kind == UP_LANCZOS3 ? 3 : 2;
	v->x0 = ext->x0 - halo > 0 ? ext->x0 - halo : 0;
	v->y0 = ext->y0 - halo > 0 ? ext->y0 - halo : 0;
	const int cx1 = ext->x1 + halo < grey->width ? ext->x1 + halo : grey->width;
	const int cy1 = ext->y1 + halo < grey->height ? ext->y1 + halo : grey->height;
	if (v->k * (cx1 - v->x0) > t->up_img.width || v->k * (cy1 - v->y0) > t->up_img.height)
		return false;
	v->up = t->up_img;
	v->up.width = v->k * (cx1 - v->x0);
	v->up.height = v->k * (cy1 - v->y0);
	v->crop = t->up_crop;
	v->crop.width = v->up.width;
	v->crop.height = v->up.height;
	v->crop.stride_words = (v->crop.width + 63) / 64;
	v->win = t->up_win;
	v->win.width = v->k * (ext->x1 - ext->x0);
	v->win.height = v->k * (ext->y1 - ext->y0);
	v->win.stride_words = (v->win.width + 63) / 64;
	const int x0 = v->x0 - ox, y0 = v->y0 - oy, x1 = cx1 - ox, y1 = cy1 - oy;
	return (kind == UP_LANCZOS3  ? upsample3_lanczos_part(src, x0, y0, x1, y1, &v->up, t->up_rows)
		: kind == UP_LANCZOS ? upsample2_lanczos_part(src, x0, y0, x1, y1, &v->up, t->up_rows)
				     : upsample2_part(src, x0, y0, x1, y1, &v->up)) == 0;
}

static bool up_enlarge(struct engine *e, const struct image_u8 *grey, const struct window *ext, int halo,
		       enum up_kind kind, struct up_view *v)
{
	return up_enlarge_from(e, grey, grey, 0, 0, ext, halo, kind, v);
}

/* As up_enlarge(), from the frame sharpened (upsample_sharpen_part, its
 * amount halves / 2) over the part the enlargement reads
 * (UP_SHARPEN_MARGIN past the box and its halo, clamped to the frame, so
 * that the enlargement's neighbours clamped to the sharpened part are
 * those clamped to the frame): the sharpened reads of sharpen_up
 * (up_triple(), up_ink_part()). */
static bool up_enlarge_sharpened(struct engine *e, const struct image_u8 *grey, const struct window *ext, int halo,
				 enum up_kind kind, int halves, struct up_view *v)
{
	struct third *t = &e->t3;
	const int reach = halo + UP_SHARPEN_MARGIN;
	const int x0 = ext->x0 - reach > 0 ? ext->x0 - reach : 0;
	const int y0 = ext->y0 - reach > 0 ? ext->y0 - reach : 0;
	const int x1 = ext->x1 + reach < grey->width ? ext->x1 + reach : grey->width;
	const int y1 = ext->y1 + reach < grey->height ? ext->y1 + reach : grey->height;
	if (x1 - x0 > t->up_src.width || y1 - y0 > t->up_src.height)
		return false;
	struct image_u8 src = t->up_src;
	src.width = x1 - x0;
	src.height = y1 - y0;
	return upsample_sharpen_part(grey, x0, y0, x1, y1, halves, &src, t->up_rows) == 0 &&
	       up_enlarge_from(e, grey, &src, x0, y0, ext, halo, kind, v);
}

/* v's thresholded mask cut to ext, segmented and matched into e->t3.det
 * (enlarged coordinates within ext); *tree: the segmenter's tree. */
static bool up_decode(struct engine *e, struct up_view *v, const struct window *ext, const struct region_tree **tree)
{
	bool read;
	return up_decode_runs(e, v, ext, INT64_MAX, tree, &read);
}

/* As up_decode(), but where the mask cut to ext holds more than max_runs
 * runs nothing is segmented or read (*read false, e->t3.det empty). */
static bool up_decode_runs(struct engine *e, struct up_view *v, const struct window *ext, int64_t max_runs,
			   const struct region_tree **tree, bool *read)
{
	struct third *t = &e->t3;
	bits_cut(&v->crop, v->k * (ext->x0 - v->x0), v->k * (ext->y0 - v->y0), &v->win);
	detections_clear(&t->det);
	*read = max_runs == INT64_MAX || segment_count_runs(t->up_seg, &v->win) <= max_runs;
	return !*read ||
	       (segment_process(t->up_seg, &v->win, tree) == 0 && match_process(t->up_mat, *tree, NULL, &t->det) == 0);
}

/* The places of the upsampled pass's fine read (up_fine; fine set): the
 * regions of a part's Bernsen read (tree, in ext enlarged twice) of a
 * symbol's size for that read (THIRD_UP_FINE_MIN_PX to THIRD_UP_MAX_PX
 * frame pixels across their box's longer side), with at least two regions
 * inside, off the part's edge, centred in its core, one a place (the first
 * of those at the same place, merge.h), up to UP_FINE_MAX_PLACES a frame;
 * and (triple set) those of UP_TRIPLE_MIN_PX up to THIRD_UP_FINE_MIN_PX,
 * the places of its read three times enlarged (up_triple), as many. */
static void fine_places(struct engine *e, const struct region_tree *tree, const struct window *ext,
			const struct window *core, bool fine, bool triple)
{
	struct third *t = &e->t3;
	for (int32_t i = 0; i < tree->n_regions; i++) {
		const struct region *g = &tree->regions[i];
		const int w = g->x1 - g->x0 + 1, h = g->y1 - g->y0 + 1;
		const float size = 0.5f * (float)(w > h ? w : h);
		const bool small = size < (float)THIRD_UP_FINE_MIN_PX;
		struct fiducial_det *list = small ? t->triple : t->fine;
		int *n = small ? &t->n_triple : &t->n_fine;
		if ((g->flags & REGION_BORDER) || g->n_adj < 3 || size < (float)UP_TRIPLE_MIN_PX ||
		    size > (float)THIRD_UP_MAX_PX || !(small ? triple : fine) || *n >= UP_FINE_MAX_PLACES)
			continue;
		/* Enlarged pixel x lies at x / 2 - 0.25 in the frame (upsample.h). */
		struct fiducial_det p = {.x = 0.25f * (float)(g->x0 + g->x1) - 0.25f + (float)ext->x0,
					 .y = 0.25f * (float)(g->y0 + g->y1) - 0.25f + (float)ext->y0,
					 .size_px = size};
		if (p.x < (float)core->x0 - 0.5f || p.x >= (float)core->x1 - 0.5f || p.y < (float)core->y0 - 0.5f ||
		    p.y >= (float)core->y1 - 0.5f || merge_near(list, *n, &p) >= 0)
			continue;
		list[(*n)++] = p;
	}
}

/* The symbol of det nearest (ex, ey) within reach, of at least min_size,
 * whole (completed 0) where whole is set; -1: none. */
static int nearest_read(const struct detections *det, float ex, float ey, float reach, bool whole, float min_size)
{
	float best = reach * reach;
	int pick = -1;
	for (int i = 0; i < det->n_fids; i++) {
		const struct fiducial_det *g = &det->fids[i];
		const float dx = g->x - ex, dy = g->y - ey;
		if ((!whole || g->completed == 0) && g->size_px >= min_size && dx * dx + dy * dy <= best) {
			best = dx * dx + dy * dy;
			pick = i;
		}
	}
	return pick;
}

/* The symbol of det (read in the enlargement of window w, k times)
 * nearest place u's centre, within 0.3 of u's size, of at least min_size
 * enlarged pixels, whole (completed 0) where whole is set; -1: none. */
static int up_nearest(const struct detections *det, const struct fiducial_det *u, const struct window *w, int k,
		      bool whole, float min_size)
{
	/* Enlarged pixel x lies at x / k - (k - 1) / 2k in the frame (upsample.h). */
	return nearest_read(det, (float)k * (u->x - (float)w->x0) + 0.5f * (float)(k - 1),
			    (float)k * (u->y - (float)w->y0) + 0.5f * (float)(k - 1), 0.3f * (float)k * u->size_px,
			    whole, min_size);
}

/* A symbol g read in the enlargement of window w, k times, in the frame's
 * coordinates, its size divided by k, without its root. */
static struct fiducial_det up_in_frame(const struct fiducial_det *g, const struct window *w, int k)
{
	struct fiducial_det f = *g;
	const float s = 1.0f / (float)k;
	f.x = s * (f.x - 0.5f * (float)(k - 1)) + (float)w->x0;
	f.y = s * (f.y - 0.5f * (float)(k - 1)) + (float)w->y0;
	f.size_px *= s;
	f.root = -1;
	return f;
}

/* Whether place u of a small read is open to the upsampled pass's reads
 * again (no symbol of the first or third scale holds it); then *w is the
 * square reaching its size plus THIRD_SMALL_CHECK_PAD past its centre. */
static bool up_place_open(const struct engine *e, const struct image_u8 *grey, const struct fiducial_det *u,
			  struct window *w)
{
	if (merge_near(e->s1.det.fids, e->s1.det.n_fids, u) >= 0 || merge_near(e->s3.det.fids, e->s3.det.n_fids, u) >= 0)
		return false;
	*w = square_around(grey, (int)u->x, (int)u->y, (int)u->size_px + THIRD_SMALL_CHECK_PAD);
	return true;
}

/* The upsampled pass's read three times enlarged (with sharp_up): each of
 * its places of UP_TRIPLE_MIN_PX to THIRD_UP_FINE_MIN_PX (fine_places)
 * that no symbol of the first or third scale holds is enlarged three times
 * by Lanczos-3 (upsample.h) in a window reaching its size plus
 * THIRD_SMALL_CHECK_PAD past its centre each way, thresholded by Bernsen
 * at radius_up and gate_up and matched with t->up3_mat (up_configs and
 * moved_unconfirmed); the symbol read there nearest its centre (within 0.3
 * of its size) is kept as a completed read where up_sharp_agrees(), and a
 * FIDUCIAL_UNCONFIRMED one (a tree one hole moved from a blob to a dot
 * away from another of the set) only where Bernsen at UP_TRIPLE_CHECK_RADIUS
 * reads the same ID there too. A 20-24 px symbol of reacTIVision's set
 * (holes and walls of 1-1.5 px under a blur of 0.7) enlarged twice keeps
 * its holes only one or two pixels of their own grey, and every read of
 * the pass and its Lanczos read leaves its tree a node or two off; three
 * times enlarged they are three or four. There a hole closed or cut open
 * while a piece of wall or a fleck of noise is taken for a dot reads as the
 * neighbouring ID, and the wider window sees the hole. The pass's check
 * (small_check) reads these as its other symbols. */
static bool up_sharp_agrees(const struct engine *e, int32_t id, float x, float y, float size);
static bool up_triple(struct engine *e, const struct image_u8 *grey, int halo)
{
	struct third *t = &e->t3;
	struct detections *d = &e->s3.det;
	for (int i = 0; i < t->n_triple; i++) {
		const struct fiducial_det *u = &t->triple[i];
		struct window w;
		if (!up_place_open(e, grey, u, &w))
			continue;
		struct up_view v;
		const struct region_tree *tree = NULL;
		struct match *keep = t->up_mat;
		t->up_mat = t->up3_mat;
		bool ok = up_enlarge(e, grey, &w, halo, UP_LANCZOS3, &v) && !threshold_process(t->up, &v.up, &v.crop) &&
			  up_decode(e, &v, &w, &tree);
		int pick = ok ? up_nearest(&t->det, u, &w, 3, false, 0.0f) : -1;
		/* (sharpen_up) Where it reads nothing there, the enlargement
		 * sharpened and read the same way: a slightly soft camera. */
		if (ok && pick < 0 && e->cfg.sharpen_up) {
			ok = up_enlarge_sharpened(e, grey, &w, halo, UP_LANCZOS3, 1, &v) &&
			     !threshold_process(t->up, &v.up, &v.crop) && up_decode(e, &v, &w, &tree);
			pick = ok ? up_nearest(&t->det, u, &w, 3, false, 0.0f) : -1;
		}
		const int kind = pick >= 0 ? t->det.fids[pick].completed : -1;
		struct fiducial_det f = pick >= 0 ? t->det.fids[pick] : *u;
		if (ok && kind == FIDUCIAL_UNCONFIRMED) {
			ok = !threshold_process(t->up3_check, &v.up, &v.crop) && up_decode(e, &v, &w, &tree);
			const int k = ok ? up_nearest(&t->det, u, &w, 3, false, 0.0f) : -1;
			if (k < 0 || t->det.fids[k].id != f.id ||
			    (t->det.fids[k].completed != 0 && t->det.fids[k].completed != FIDUCIAL_UNCONFIRMED))
				pick = -1;
		}
		t->up_mat = keep;
		if (!ok)
			return false;
		if (pick < 0 || (kind != 0 && kind != FIDUCIAL_UNCONFIRMED))
			continue;
		f = up_in_frame(&f, &w, 3);
		if (!up_sharp_agrees(e, f.id, f.x, f.y, f.size_px))
			continue;
		f.completed = 1;
		det_append(d, true, &f);
	}
	return true;
}

/* The upsampled pass's fine read (fine_up): each of its places
 * (fine_places) that no symbol of the first or third scale holds is
 * enlarged twice by Lanczos-3 (upsample.h) in a window reaching its size
 * plus THIRD_SMALL_CHECK_PAD past its centre each way and thresholded by
 * Bernsen at THIRD_UP_FINE_RADIUS (up_fine_config); the symbol read there
 * nearest its centre (within 0.3 of its size) of at least
 * THIRD_UP_FINE_MIN_PX stands as a fallback (FIDUCIAL_FALLBACK). The
 * pass's check (small_check) reads these as its other symbols. */
static bool up_fine(struct engine *e, const struct image_u8 *grey, int halo)
{
	struct third *t = &e->t3;
	struct detections *d = &e->s3.det;
	for (int i = 0; i < t->n_fine; i++) {
		const struct fiducial_det *u = &t->fine[i];
		struct window w;
		if (!up_place_open(e, grey, u, &w))
			continue;
		struct up_view v;
		const struct region_tree *tree = NULL;
		if (!up_enlarge(e, grey, &w, halo, UP_LANCZOS, &v) || threshold_process(t->up_fine, &v.up, &v.crop) ||
		    !up_decode(e, &v, &w, &tree))
			return false;
		const int pick = up_nearest(&t->det, u, &w, 2, false, 2.0f * (float)THIRD_UP_FINE_MIN_PX);
		if (pick < 0)
			continue;
		struct fiducial_det f = up_in_frame(&t->det.fids[pick], &w, 2);
		f.completed = FIDUCIAL_FALLBACK;
		det_append(d, true, &f);
	}
	return true;
}

/* The squeeze of the symbol at place u (rectify_up): the grey's second
 * moments, within RECT_REACH of u's size around its centre, of the pixels
 * that differ from the paper (the median of the square's border, RECT_CROP
 * of u's size from its centre) by over RECT_INK of the most any does. Its
 * long axis into (ux, uy); returns the square root of the moments' ratio
 * (1 or more), 0 where nothing differs. A square card seen at a slant or
 * near a barrel lens's edge is a parallelogram whose long and short axes
 * these are. */
static float rect_shape(const struct image_u8 *grey, const struct fiducial_det *u, float *ux, float *uy)
{
	const int r = (int)(RECT_CROP * u->size_px + 0.5f), cx = (int)(u->x + 0.5f), cy = (int)(u->y + 0.5f);
	const int x0 = cx - r > 0 ? cx - r : 0, y0 = cy - r > 0 ? cy - r : 0;
	const int x1 = cx + r < grey->width - 1 ? cx + r : grey->width - 1;
	const int y1 = cy + r < grey->height - 1 ? cy + r : grey->height - 1;
	if (x1 - x0 < 4 || y1 - y0 < 4)
		return 0.0f;
	int hist[256] = {0}, n = 0;
	for (int x = x0; x <= x1; x++) {
		hist[image_u8_row(grey, y0)[x]]++;
		hist[image_u8_row(grey, y1)[x]]++;
		n += 2;
	}
	for (int y = y0 + 1; y < y1; y++) {
		hist[image_u8_row(grey, y)[x0]]++;
		hist[image_u8_row(grey, y)[x1]]++;
		n += 2;
	}
	int paper = 0;
	for (int c = hist[0]; c <= n / 2 && paper < 255;)
		c += hist[++paper];
	const float reach = RECT_REACH * u->size_px, reach2 = reach * reach;
	int most = 0;
	for (int y = y0; y <= y1; y++) {
		const uint8_t *row = image_u8_row(grey, y);
		for (int x = x0; x <= x1; x++) {
			const float dx = (float)x - u->x, dy = (float)y - u->y;
			const int d = abs((int)row[x] - paper);
			if (dx * dx + dy * dy <= reach2 && d > most)
				most = d;
		}
	}
	const float floor_d = RECT_INK * (float)most;
	double m = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
	for (int y = y0; y <= y1; y++) {
		const uint8_t *row = image_u8_row(grey, y);
		for (int x = x0; x <= x1; x++) {
			const float dx = (float)x - u->x, dy = (float)y - u->y;
			if (dx * dx + dy * dy > reach2 || (float)abs((int)row[x] - paper) <= floor_d)
				continue;
			m += 1;
			sx += dx;
			sy += dy;
			sxx += (double)dx * dx;
			syy += (double)dy * dy;
			sxy += (double)dx * dy;
		}
	}
	if (m < 16)
		return 0.0f;
	const double mx = sx / m, my = sy / m;
	const double a = sxx / m - mx * mx, b = sxy / m - mx * my, c = syy / m - my * my;
	const double half = 0.5 * (a + c), root = sqrt(0.25 * (a - c) * (a - c) + b * b);
	const double l1 = half + root, l2 = half - root;
	if (!(l2 > 0.0))
		return 0.0f;
	const double th = 0.5 * atan2(2.0 * b, a - c);
	*ux = (float)cos(th);
	*uy = (float)sin(th);
	return (float)sqrt(l1 / l2);
}

/* The upsampled pass's rectified read (rectify_up): each of its places
 * (fine_places, both lists) of at most RECT_MAX_PX that no symbol of the
 * first or third scale holds and whose symbol is squeezed (rect_shape, at
 * least RECT_MIN_ASPECT) is enlarged RECT_ENLARGE times along its long
 * axis and as many more times along its short axis as it is squeezed (at
 * most RECT_MAX_ASPECT) by Lanczos-3 (upsample_affine_lanczos), a square
 * reaching RECT_CROP of its size past its centre; that enlargement's
 * streak (the stretched axis's blur) is undone and thresholded as the
 * deblurring pass does a window's (deblur_process, the rule's radius for
 * the place enlarged; where that reads nothing there, again at
 * THIRD_DEBLUR_LOW_RADIUS, then at RECT_HIGH_RADIUS), segmented and
 * matched by the pass's matcher; the symbol read nearest the place's
 * centre (within 0.3 of its size) is mapped back to the frame and stands
 * as a fallback (FIDUCIAL_FALLBACK). At most RECT_MAX_PLACES places a
 * frame: each costs about 11 M instructions (a square of about 140 px,
 * eight rounds of Richardson-Lucy). The pass's check (small_check) reads
 * these as its other symbols. A symbol of 24-40 px foreshortened by a
 * tilted camera, or squeezed near a barrel lens's edge, keeps holes and
 * walls of about 1 px across its short axis: every isotropic enlargement
 * blends them there while they are 2-3 px along the other. Stretched back
 * they are as wide both ways, and the stretch's blur along that axis is a
 * streak's, which the deconvolution takes back. */
static bool up_rectify(struct engine *e, const struct image_u8 *grey)
{
	struct third *t = &e->t3;
	struct detections *d = &e->s3.det;
	const struct windows_radius rule = {e->cfg.mean_scale3, THIRD_SCALED_MIN_RADIUS, THIRD_SCALED_MAX_RADIUS};
	const float k = (float)RECT_ENLARGE;
	int read = 0;
	for (int list = 0; list < 2; list++) {
		const int n = list ? t->n_triple : t->n_fine;
		for (int i = 0; i < n && read < RECT_MAX_PLACES; i++) {
			const struct fiducial_det *u = list ? &t->triple[i] : &t->fine[i];
			struct window w;
			float ux = 1.0f, uy = 0.0f;
			if (u->size_px > (float)RECT_MAX_PX || !up_place_open(e, grey, u, &w))
				continue;
			float aspect = rect_shape(grey, u, &ux, &uy);
			if (aspect < RECT_MIN_ASPECT)
				continue;
			aspect = aspect < RECT_MAX_ASPECT ? aspect : RECT_MAX_ASPECT;
			/* The enlargement k (u u' + aspect v v'), v = (-uy, ux) the
			 * short axis, maps the frame to the square; its inverse
			 * (u u' + v v' / aspect) / k maps the square back. */
			const float i00 = (ux * ux + uy * uy / aspect) / k, i01 = (ux * uy - ux * uy / aspect) / k,
				    i11 = (uy * uy + ux * ux / aspect) / k;
			const int side = 2 * (int)ceilf(k * (RECT_OUT * u->size_px + (float)THIRD_SMALL_CHECK_PAD)) + 1;
			if (side > t->up_img.width || side > t->up_img.height)
				continue;
			read++;
			struct image_u8 img = t->up_img;
			img.width = img.height = side;
			struct bitmask crop = t->up_crop;
			crop.width = crop.height = side;
			crop.stride_words = (side + 63) / 64;
			const float o = 0.5f * (float)(side - 1);
			const float map[6] = {i00, i01, u->x - (i00 + i01) * o, i01, i11, u->y - (i01 + i11) * o};
			struct deblur_streak est;
			if (upsample_affine_lanczos(grey, map, &img) != 0)
				return false;
			const int rungs[3] = {windows_radius(&rule, (int)(k * u->size_px + 0.5f)), THIRD_DEBLUR_LOW_RADIUS,
					      RECT_HIGH_RADIUS};
			const int found = deblur_process(t->up_deblur, &img, NULL, rungs[0], e->cfg.deblur3_bias, e->gate,
							 false, &crop, &est);
			if (found < 0)
				return false;
			if (found != DEBLUR_STREAK)
				continue;
			int pick = -1;
			for (int r = 0; r < 3 && pick < 0; r++) {
				if (r > 0 && (rungs[r] == rungs[0] ||
					      deblur_rethreshold(t->up_deblur, rungs[r], e->cfg.deblur3_bias, e->gate, &crop) != 0))
					continue;
				const struct region_tree *tree = NULL;
				detections_clear(&t->det);
				if (segment_process(t->up_seg, &crop, &tree) != 0 ||
				    match_process(t->up_mat, tree, NULL, &t->det) != 0)
					return false;
				pick = nearest_read(&t->det, o, o, 0.3f * k * u->size_px, false, 0.0f);
			}
			if (pick < 0)
				continue;
			struct fiducial_det f = t->det.fids[pick];
			const float dx = f.x - o, dy = f.y - o;
			f.x = u->x + i00 * dx + i01 * dy;
			f.y = u->y + i01 * dx + i11 * dy;
			f.size_px /= k * sqrtf(aspect);
			/* The angle is that of the vector at angle + pi/2
			 * (decode.c), mapped back as any vector is. */
			const float ca = cosf(f.angle + (float)M_PI_2), sa = sinf(f.angle + (float)M_PI_2);
			float angle = atan2f(i01 * ca + i11 * sa, i00 * ca + i01 * sa) - (float)M_PI_2;
			f.angle = angle < 0.0f ? angle + 2.0f * (float)M_PI : angle;
			f.root = -1;
			f.completed = FIDUCIAL_FALLBACK;
			det_append(d, true, &f);
		}
	}
	return true;
}

/* One part of the upsampled pass: the box ext of the frame, enlarged
 * with halo pixels around it for the threshold, thresholded, cut out,
 * segmented and matched; symbols whose centre lies in the box core
 * (within ext) and of at most THIRD_UP_MAX_PX (in the frame's pixels)
 * appended to the scale's detections in frame coordinates, sizes halved;
 * the trees of the Bernsen read's fuzzy reads of at most UP_SHARP_MAX_PX
 * kept for up_sharp() (t->up_fuzzy), and (fine_up) the places of the
 * Bernsen read's regions for up_fine() (fine_places). ink: up_ink_part()
 * instead. */
static bool up_ink_part(struct engine *e, const struct image_u8 *grey, const struct window *ext,
			const struct window *core, int halo);
static bool up_part(struct engine *e, const struct image_u8 *grey, const struct window *ext, const struct window *core,
		    int halo, bool ink)
{
	if (ink)
		return up_ink_part(e, grey, ext, core, halo);
	struct third *t = &e->t3;
	struct up_view v;
	if (!up_enlarge(e, grey, ext, halo, UP_BILINEAR, &v))
		return false;
	/* Bernsen, then (close_up) the closing against the paper's own light:
	 * where a hard shadow's edge crosses a small symbol, Bernsen's window
	 * turns a band of the shadowed paper black and joins it to the
	 * symbol; the closing follows the light's step (as the closing pass
	 * for larger symbols). */
	const int reads = t->up_close && e->cfg.close_up > 0 ? 2 : 1;
	const int first = e->s3.det.n_fids;
	int second = first;
	for (int r = 0; r < reads; r++) {
		if (r == 1)
			second = e->s3.det.n_fids;
		if (r == 0 ? threshold_process(t->up, &v.up, &v.crop)
			   : closing_process(t->up_close, &v.up, e->cfg.close_up, e->cfg.close_up_pct, e->gate, &v.crop))
			return false;
		const struct region_tree *tree = NULL;
		if (!up_decode(e, &v, ext, &tree))
			return false;
		if (r == 0 && (e->cfg.fine_up || e->cfg.sharp_up))
			fine_places(e, tree, ext, core, e->cfg.fine_up, e->cfg.sharp_up);
		struct detections *d = &e->s3.det;
		for (int i = 0; i < t->det.n_fids + t->det.n_fuzzy; i++) {
			const bool fid = i < t->det.n_fids;
			struct fiducial_det f = fid ? t->det.fids[i] : t->det.fuzzy[i - t->det.n_fids];
			/* Enlarged pixel x lies at x / 2 - 0.25 in the frame (upsample.h). */
			f.x = 0.5f * f.x - 0.25f + (float)ext->x0;
			f.y = 0.5f * f.y - 0.25f + (float)ext->y0;
			f.size_px *= 0.5f;
			if (f.size_px > (float)THIRD_UP_MAX_PX || f.x < (float)core->x0 - 0.5f ||
			    f.x >= (float)core->x1 - 0.5f || f.y < (float)core->y0 - 0.5f || f.y >= (float)core->y1 - 0.5f)
				continue;
			struct up_fuzzy *u = &t->up_fuzzy[t->n_up_fuzzy];
			if (r == 0 && !fid && f.root >= 0 && f.size_px <= (float)UP_SHARP_MAX_PX &&
			    t->n_up_fuzzy < UP_SHARP_MAX_TREES &&
			    match_canonical_string(tree, f.root, -1, u->canon, sizeof u->canon) > 0) {
				u->x = f.x;
				u->y = f.y;
				u->size = f.size_px;
				t->n_up_fuzzy++;
			}
			f.root = -1;
			if (r == 1)
				f.completed = 1;
			det_append(d, fid, &f);
		}
	}
	if (reads == 2)
		merge_second_read(&e->s3.det, first, second);
	/* (mean_up) Then the part's read as an ink window's (up_ink_part):
	 * most small symbols a hard shadow's edge crosses that no pass read
	 * lie in these windows and in no ink window (too much of them still
	 * branches in the first scale), mostly in the shadow at a third of
	 * the light or less, where Bernsen's window and the closing set the
	 * level by the lit side and the bilinear enlargement blends their 1-2
	 * px holes into the walls. Where the bilinear reads read the same
	 * symbol, the two reads are two votes. */
	return !e->cfg.mean_up || !t->up_mean || up_ink_part(e, grey, ext, core, halo);
}

/* Whether f's centre lies within UP_INSIDE_LARGER of the size of a larger
 * symbol of list (n), inside that symbol's card: no symbol of the set lies
 * there (cards do not overlap; a card is about 1.3 times the size read).
 * On a noisy frame (noise 9) the sharpened read took a corner of a 75 px
 * symbol's root, its ring and three dots for a 36 px symbol, 41 px from
 * the larger one's centre. */
static bool inside_larger(const struct fiducial_det *list, int n, const struct fiducial_det *f)
{
	for (int i = 0; i < n; i++)
		if (list[i].size_px > f->size_px &&
		    hypotf(list[i].x - f->x, list[i].y - f->y) < UP_INSIDE_LARGER * list[i].size_px)
			return true;
	return false;
}

/* up_part()'s read of an ink window's part (ink_up; with mean_up, of
 * each of its own parts too): the part enlarged by Lanczos-3 and
 * thresholded by t->up_mean (INK_UP_MEAN_RADIUS), then (sauvola_up) by
 * t->up_sauvola where that read holds no symbol, its whole symbols (no
 * completed read: third_up() marks these fallbacks, which would hide
 * that they are weaker, as up_sharp() keeps whole reads alone) of at
 * most THIRD_UP_MAX_PX centred in core appended to the scale's
 * detections as up_part() does (third_up() keeps them only where no
 * other read holds the place); those over INK_UP_WHOLE_PX as
 * FIDUCIAL_UNCONFIRMED, which third_up() keeps only where the frame
 * enlarged twice confirms them (small_confirm). A symbol of 30-35 px
 * turned, foreshortened by a tilt or squeezed by a barrel lens near the
 * frame's edge spans 41-56 px; a cap of 46 or 57 alone read such symbols
 * drawn squeezed in a hard shadow as other IDs (a one-hole blob's ring
 * cut into two arcs), which the confirming read's tree (the ID's less a
 * node or two) turns away. Over the cap, on room with our set (24
 * frames, seed 39) it read a 42 px 75 at the frame's edge that no other
 * read held (0.927 -> 0.934). Where a hard shadow's edge crosses a
 * symbol of 24-32 px, most of it lies in the shadow at a third of the
 * light or less: its ink and paper differ by a few grey levels more than
 * the noise, and its holes and walls are 1-2 px. Bernsen's window
 * (radius_up) spans the edge and the closing's running maximum the lit
 * paper beside the ink, so both set the threshold by the lit side and
 * the shadowed symbol turns black; bilinear enlargement blends its holes
 * into their walls. The local mean of a window of 7 enlarged pixels (3.5
 * of the frame's) lies on the shadowed paper's side of the edge and
 * between that paper and its ink, and Lanczos keeps the holes apart. */
static bool up_ink_part(struct engine *e, const struct image_u8 *grey, const struct window *ext,
			const struct window *core, int halo)
{
	struct third *t = &e->t3;
	struct up_view v;
	const struct region_tree *tree = NULL;
	if (!up_enlarge(e, grey, ext, halo, UP_LANCZOS, &v))
		return false;
	/* The reads, in this order, each on the same part:
	 * - UP_READ_MEAN: the local mean (t->up_mean).
	 * - UP_READ_SAUVOLA (sauvola_up): Sauvola's rule (t->up_sauvola,
	 *   up_sharp()'s fourth threshold) on the same enlargement, its
	 *   symbols kept only where the local mean's read holds none: in a
	 *   shadow at a third of the light or less a symbol's holes are a few
	 *   grey levels above its walls, and Sauvola's level, k under the mean
	 *   where the window is flat and nearer the mean where it is not,
	 *   keeps a shallow hole that the mean's fixed bias gives to the wall.
	 * - UP_READ_ENCODED (encode_up): where neither read a symbol, the
	 *   enlargement encoded (INK_UP_ENCODE_GAMMA) and read by the local
	 *   mean once more.
	 * - UP_READ_SHARPENED (sharpen_up): last, where those reads left a
	 *   fuzzy tree open, the frame sharpened (up_enlarge_sharpened) and
	 *   read by the local mean, its symbols kept where none of the reads
	 *   before holds one: a slightly soft camera blurs a small symbol's
	 *   1-1.5 px holes into their walls. Parts without such a tree read
	 *   nothing more there (on the survey 2 symbols in 15,398 less) and
	 *   cost a seventh as much (shadowed 640x480 frames +1-5 %
	 *   instructions where every part read again cost +17 %).
	 * - UP_READ_STRONG (sharpen_up): where that read adds no symbol and the
	 *   tree is still open, once more with a mask three times as strong
	 *   (amount 3/2, UP_SHARPEN_STRONG): a blur of 1-1.5 px.
	 * A read that segments nothing (its tree cut short) ends the part. */
	enum up_read { UP_READ_MEAN, UP_READ_SAUVOLA, UP_READ_ENCODED, UP_READ_SHARPENED, UP_READ_STRONG };
	enum up_read order[5];
	int n_reads = 0;
	order[n_reads++] = UP_READ_MEAN;
	if (e->cfg.sauvola_up && t->up_sauvola)
		order[n_reads++] = UP_READ_SAUVOLA;
	if (e->cfg.encode_up)
		order[n_reads++] = UP_READ_ENCODED;
	if (e->cfg.sharpen_up) {
		order[n_reads++] = UP_READ_SHARPENED;
		order[n_reads++] = UP_READ_STRONG;
	}
	const int first = e->s3.det.n_fids;
	int before_sharpened = 0;
	/* Whether a read before left a fuzzy tree at a place no symbol of the
	 * first or third scale holds: the sharpened read runs only then. */
	bool open_fuzzy = false;
	/* The sharpened reads stop where their mask holds more runs than
	 * UP_SHARPEN_RUNS_SHARE of what the segmenter holds: the mask raises
	 * the paper's noise into specks (a part of 304 px square of drawn
	 * small or streaked symbols: the local mean's 15-30 thousand runs
	 * became 40-58 thousand, the segmenter holding 58.5), and such a
	 * part's tree, cut short, reads nothing of its symbols. */
	const int64_t sharp_runs = (int64_t)(UP_SHARPEN_RUNS_SHARE * (float)segment_run_capacity(t->up_seg));
	for (int k = 0; k < n_reads; k++) {
		const enum up_read r = order[k];
		const bool sharp = r == UP_READ_SHARPENED || r == UP_READ_STRONG;
		if (r == UP_READ_ENCODED && e->s3.det.n_fids > first)
			continue;
		if ((r == UP_READ_SHARPENED && !open_fuzzy) ||
		    (r == UP_READ_STRONG && e->s3.det.n_fids > before_sharpened))
			break;
		if (r == UP_READ_SHARPENED)
			before_sharpened = e->s3.det.n_fids;
		if (r == UP_READ_ENCODED)
			image_u8_map(&v.up, t->up_encode);
		if (sharp && !up_enlarge_sharpened(e, grey, ext, halo, UP_LANCZOS,
						   r == UP_READ_STRONG ? UP_SHARPEN_STRONG : 1, &v))
			return false;
		bool read;
		if (threshold_process(r == UP_READ_SAUVOLA ? t->up_sauvola : t->up_mean, &v.up, &v.crop) ||
		    !up_decode_runs(e, &v, ext, sharp ? sharp_runs : INT64_MAX, &tree, &read))
			return false;
		if (!read)
			break;
		for (int i = 0; e->cfg.sharpen_up && i < t->det.n_fuzzy && !open_fuzzy; i++) {
			struct fiducial_det f = up_in_frame(&t->det.fuzzy[i], ext, 2);
			open_fuzzy = merge_near(e->s3.det.fids, e->s3.det.n_fids, &f) < 0 &&
				     merge_near(e->s1.det.fids, e->s1.det.n_fids, &f) < 0;
		}
		const int held = e->s3.det.n_fids;
		for (int i = 0; i < t->det.n_fids; i++) {
			struct fiducial_det f = up_in_frame(&t->det.fids[i], ext, 2);
			if (f.completed || f.size_px > (float)THIRD_UP_MAX_PX || f.x < (float)core->x0 - 0.5f ||
			    f.x >= (float)core->x1 - 0.5f || f.y < (float)core->y0 - 0.5f ||
			    f.y >= (float)core->y1 - 0.5f)
				continue;
			if (r != UP_READ_MEAN && merge_near(e->s3.det.fids + first, held - first, &f) >= 0)
				continue;
			if (sharp && (inside_larger(e->s1.det.fids, e->s1.det.n_fids, &f) ||
				      inside_larger(e->s3.det.fids, e->s3.det.n_fids, &f)))
				continue;
			if (f.size_px > (float)INK_UP_WHOLE_PX)
				f.completed = FIDUCIAL_UNCONFIRMED;
			det_append(&e->s3.det, true, &f);
		}
	}
	return true;
}

/* A window of the upsampled pass: whole where it fits a tile (a symbol
 * its edge cuts is skipped, as in third_window), else tile by tile, each
 * tile reaching THIRD_UP_REACH pixels past its core (clamped to the
 * window) and keeping the symbols centred in its core; ink: read by
 * up_ink_part(). */
static bool up_window(struct engine *e, const struct image_u8 *grey, const struct window *w, int halo, bool ink)
{
	if (w->x1 - w->x0 <= THIRD_UP_TILE + 2 * THIRD_UP_REACH && w->y1 - w->y0 <= THIRD_UP_TILE + 2 * THIRD_UP_REACH)
		return up_part(e, grey, w, w, halo, ink);
	bool ok = true;
	for (int y = w->y0; y < w->y1 && ok; y += THIRD_UP_TILE)
		for (int x = w->x0; x < w->x1 && ok; x += THIRD_UP_TILE) {
			const struct window core = {.x0 = x, .y0 = y,
						    .x1 = x + THIRD_UP_TILE < w->x1 ? x + THIRD_UP_TILE : w->x1,
						    .y1 = y + THIRD_UP_TILE < w->y1 ? y + THIRD_UP_TILE : w->y1};
			const struct window ext = {.x0 = core.x0 - THIRD_UP_REACH > w->x0 ? core.x0 - THIRD_UP_REACH : w->x0,
						   .y0 = core.y0 - THIRD_UP_REACH > w->y0 ? core.y0 - THIRD_UP_REACH : w->y0,
						   .x1 = core.x1 + THIRD_UP_REACH < w->x1 ? core.x1 + THIRD_UP_REACH : w->x1,
						   .y1 = core.y1 + THIRD_UP_REACH < w->y1 ? core.y1 + THIRD_UP_REACH : w->y1};
			ok = up_part(e, grey, &ext, &core, halo, ink);
		}
	return ok;
}

/* The upsampled pass over the first n windows of e->t3.win, counted in
 * its statistics; ink: as up_window(). */
static bool up_windows(struct engine *e, const struct image_u8 *grey, int n, int halo, bool ink)
{
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		const struct window *w = &e->t3.win[i];
		e->t3.stats.up_windows++;
		e->t3.stats.up_area_px += (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		ok = up_window(e, grey, w, halo, ink);
	}
	return ok;
}

/* Keeps the third scale's symbols from `from` on (the upsampled pass's
 * island windows, the closing pass's ink windows) only where no symbol of
 * the first scale's or of the third's before `from` lies at their place,
 * as fallbacks; the rest go. A fallback before `from` that one of them
 * reads as another ID goes too, to the fuzzy symbols: two weak reads
 * that disagree are neither believed (as merge_scale() has it between
 * scales), and the place is free for a later pass's read. On
 * shadow-small drawn from reacTIVision's pictures (seed 83, frame 4) the
 * closing pass's ink windows read a 34 px 84 as 46, the upsampled
 * pass's Lanczos read of the place as 84: the 46 stood alone, and now
 * the Lanczos read of small fuzzy places (up_sharp) reads the 84 there.
 * Nothing else changed on the guard collections but their sheet-half
 * seeds 501-524 (24 frames), 9660 -> 9661 read. *index, an
 * index into the list a caller holds (or NULL), follows the reads that
 * go. */
static void fallback_reads(struct engine *e, int from, int *index)
{
	struct detections *d = &e->s3.det;
	int k = from, contested = 0;
	for (int i = from; i < d->n_fids; i++) {
		const struct fiducial_det *f = &d->fids[i];
		if (merge_near(e->s1.det.fids, e->s1.det.n_fids, f) >= 0)
			continue;
		const int j = merge_near(d->fids, from, f);
		if (j >= 0 && d->fids[j].completed == FIDUCIAL_FALLBACK && d->fids[j].id != f->id) {
			d->fids[j].completed = THIRD_CONTESTED;
			contested++;
		}
		if (j >= 0)
			continue;
		d->fids[k] = *f;
		d->fids[k++].completed = FIDUCIAL_FALLBACK;
	}
	d->n_fids = k;
	if (!contested)
		return;
	const int held = index ? *index : 0;
	k = 0;
	for (int i = 0; i < d->n_fids; i++) {
		struct fiducial_det f = d->fids[i];
		if (f.completed != THIRD_CONTESTED) {
			d->fids[k++] = f;
			continue;
		}
		if (i < held)
			(*index)--;
		f.id = -1;
		f.completed = FIDUCIAL_FALLBACK;
		det_append(d, false, &f);
	}
	d->n_fids = k;
}

/* The frame pixels the upsampled pass's reads take around a part: its
 * Bernsen window and blur, in enlarged pixels, halved, and one more for
 * the bilinear neighbour; the closing reads 2 close_up enlarged pixels
 * around each. */
static int up_halo(const struct engine *e)
{
	int taps[THRESHOLD_GAUSS_MAX_RADIUS + 1];
	const int halo = (e->cfg.radius_up + threshold_gauss_taps(e->cfg.thr.gauss_sigma, taps) + 1) / 2 + 1;
	return e->t3.up_close && e->cfg.close_up > 0 && e->cfg.close_up + 1 > halo ? e->cfg.close_up + 1 : halo;
}

/* Whether a Lanczos read of ID id at (x, y) (frame pixels, size across)
 * stands against the upsampled pass's Bernsen read there: the nearest of
 * its fuzzy reads (t->up_fuzzy) within 0.3 of size, judged by
 * merge_sharp_stands(). */
static bool up_sharp_agrees(const struct engine *e, int32_t id, float x, float y, float size)
{
	const struct third *t = &e->t3;
	const float reach = 0.3f * size;
	float best = reach * reach;
	const char *canon = NULL;
	for (int k = 0; k < t->n_up_fuzzy; k++) {
		const float dx = t->up_fuzzy[k].x - x, dy = t->up_fuzzy[k].y - y;
		if (dx * dx + dy * dy <= best) {
			best = dx * dx + dy * dy;
			canon = t->up_fuzzy[k].canon;
		}
	}
	return merge_sharp_stands(id, canon, e->cfg.match.trees);
}

/* The Lanczos check of the small-symbol and upsampled passes' reads
 * (small_check, with sharp_up): the place of d's symbol i, the square w
 * around it, enlarged twice by Lanczos-3 and thresholded by the upsampled
 * pass's Bernsen (radius_up, gate_up), as up_sharp() reads fuzzy places;
 * its whole symbols (completed 0), in frame coordinates, judge symbol i as
 * the radius_small_check read's do (merge_check): where one of another ID with a
 * root of the same colour lies at its place, symbol i moves to the fuzzy
 * list and it returns true. *ok: false where the read failed. Bernsen at
 * radius 1 and the bilinear enlargement lose a 24-28 px symbol's 1-2 px
 * holes and walls in their own ways (two blobs joined by a bridge that
 * encloses a piece of the root as a hole, a dot bridged to a blob as its
 * hole, a hole closed while a speck is taken for another), which the
 * check at radius 2 did not contradict; Lanczos keeps them apart. On
 * reacTIVision's set at 24-28 px (small, seeds 40-79, 16 frames) the
 * Lanczos read gave another ID whole at 13 of the two passes' 14 wrong
 * reads, each time the true one, and at none of their 11 264 right reads.
 * A fallback (FIDUCIAL_FALLBACK: the island, ink and fine reads) is not
 * judged: it stands only where nothing else reads, and on oblique two
 * right ones (28 and 36 px, foreshortened) were read by Lanczos as
 * another ID, a hole lost and a ringing speck taken for a dot. Nor is a
 * read over THIRD_SMALL_MAX_PX: over the realistic, oblique and
 * sheet-half sets its Lanczos read held one right read of 54 px of
 * 10 127 and no wrong one. */
static bool sharp_check(struct engine *e, const struct image_u8 *grey, const struct window *w, int i, bool *ok)
{
	struct third *t = &e->t3;
	struct up_view v;
	const struct region_tree *tree = NULL;
	*ok = up_enlarge(e, grey, w, up_halo(e), UP_LANCZOS, &v) && !threshold_process(t->up, &v.up, &v.crop) &&
	      up_decode(e, &v, w, &tree);
	if (!*ok)
		return false;
	int n = 0;
	for (int k = 0; k < t->det.n_fids; k++)
		if (t->det.fids[k].completed == 0)
			t->det.fids[n++] = up_in_frame(&t->det.fids[k], w, 2);
	t->det.n_fids = n;
	return merge_check(&e->s3.det, i, &t->det, e->cfg.match.trees);
}

/* The upsampled pass's Lanczos read: each place of a fuzzy read of the
 * third scale (d->fuzzy; the small-symbol pass's and the upsampled
 * pass's own among them) of at most UP_SHARP_MAX_PX that no symbol of the
 * first or third scale holds is enlarged again by Lanczos-3 (upsample.h)
 * in a window reaching its size plus THIRD_SMALL_CHECK_PAD past its centre
 * each way and thresholded as the pass does (Bernsen, then where that
 * reads nothing whole there the closing read, then with ink_up the ink
 * windows' small local mean, up_ink_part(), and Sauvola's rule); the
 * symbol read there whole
 * nearest its centre (within 0.3 of its size) is kept as a completed read
 * where up_sharp_agrees(). Bilinear interpolation blurs a 24-28 px
 * symbol's 1-2 px holes and walls into their neighbours; Lanczos's lobes
 * keep them apart, but its ringing also raises specks that the matcher
 * can take for a dot while a hole is lost (a 25 px 53 read as 17, the
 * Bernsen read's fuzzy tree 17's whole). The pass's check
 * (small_check) reads these as its other symbols. */
static bool up_sharp(struct engine *e, const struct image_u8 *grey, int halo)
{
	struct third *t = &e->t3;
	struct detections *d = &e->s3.det;
	const int n_fuzzy = d->n_fuzzy;
	for (int i = 0; i < n_fuzzy; i++) {
		const struct fiducial_det *u = &d->fuzzy[i];
		struct window w;
		if (u->size_px > (float)UP_SHARP_MAX_PX || merge_near(d->fuzzy, i, u) >= 0 || !up_place_open(e, grey, u, &w))
			continue;
		struct up_view v;
		const struct region_tree *tree = NULL;
		if (!up_enlarge(e, grey, &w, halo, UP_LANCZOS, &v))
			return false;
		int pick = -1;
		/* Bernsen, then where it reads nothing whole there (close_up) the
		 * closing against the paper's own light, as up_part() does: a hard
		 * shadow's edge across the symbol; then (ink_up) the small local
		 * mean, as up_ink_part() does, and Sauvola's rule over a window of
		 * about that size (INK_UP_SAUVOLA_RADIUS): a small symbol mostly in
		 * a shadow, whose ink and paper differ by a few grey levels. */
		const int closed = t->up_close && e->cfg.close_up > 0;
		const bool ink = e->cfg.ink_up && t->up_mean && t->up_sauvola;
		const int mean = ink ? 1 + closed : -1;
		const int reads = 1 + closed + (ink ? 2 : 0);
		for (int rd = 0; rd < reads && pick < 0; rd++) {
			if (rd == 0 ? threshold_process(t->up, &v.up, &v.crop)
			    : rd == mean
				    ? threshold_process(t->up_mean, &v.up, &v.crop)
			    : rd == mean + 1
				    ? threshold_process(t->up_sauvola, &v.up, &v.crop)
				    : closing_process(t->up_close, &v.up, e->cfg.close_up, e->cfg.close_up_pct, e->gate, &v.crop))
				return false;
			if (!up_decode(e, &v, &w, &tree))
				return false;
			pick = up_nearest(&t->det, u, &w, 2, true, 0.0f);
		}
		if (pick < 0)
			continue;
		struct fiducial_det f = up_in_frame(&t->det.fids[pick], &w, 2);
		if (!up_sharp_agrees(e, f.id, f.x, f.y, f.size_px))
			continue;
		f.completed = 1;
		det_append(d, true, &f);
	}
	return true;
}

/* The third scale's upsampled pass (radius_up): in windows found as for
 * the small-symbol pass (the whole frame where they would cover more than
 * half of it), tile by tile, the frame enlarged twice (threshold/upsample.h)
 * and thresholded by Bernsen at radius_up without a median, so that the
 * 1-1.5 px holes and walls of symbols foreshortened by a tilted camera or
 * shrunk in a wide lens's corners are 2-3 px; its symbols, sizes halved
 * back, follow the other passes' in the scale's detections. They pass the
 * small-symbol pass's check (small_check): in a defocused frame the
 * enlarged blobs of a 40 px symbol lost a hole where the frame's own
 * pixels at radius_small_check still hold it (172 read as 127). Then,
 * where nothing of a symbol branches in the first scale's tree but its
 * holes and dots cluster as islands there (windows_find_islands), it
 * fills empty places (fallback_reads). With mean_up, each part of its
 * windows is also read as an ink window is (up_part, up_ink_part). Then
 * (sharp_up), the places of small fuzzy symbols are read again enlarged
 * by Lanczos-3 (up_sharp). Last (ink_up), the ink tiles no symbol read,
 * as up_ink_part() reads them. */
static bool third_up(struct engine *e, const struct image_u8 *grey)
{
	if (!e->t3.up)
		return true;
	const int found = windows_find_small(&e->t3.scan, THIRD_UP_WIN_PX, THIRD_SMALL_PAD, e->t3.win,
					     THIRD_MAX_WINDOWS);
	const int n = windows_or_frame(e, grey, found);
	const int halo = up_halo(e);
	int from = e->s3.det.n_fids;
	e->t3.n_up_fuzzy = 0;
	e->t3.n_fine = 0;
	e->t3.n_triple = 0;
	e->t3.n_failed = 0;
	bool ok = up_windows(e, grey, n, halo, false);
	/* Their local-mean reads (mean_up) over INK_UP_WHOLE_PX stand only
	 * where the frame enlarged twice confirms them, as the ink windows'. */
	if (ok && e->cfg.mean_up)
		ok = small_confirm(e, grey, from, true);
	/* Then where only islands cluster (windows_find_islands; not after
	 * the whole frame): reads that fill places no other read of the
	 * first and third scales holds, as fallbacks (FIDUCIAL_FALLBACK), so
	 * that no read of the second scale either holds the place. Elsewhere
	 * they would be a second vote of one method for a damaged read: on
	 * sun with reacTIVision's set (seed 42, frame 9) the closing pass and
	 * this pass's closing read both read a 41 px 88 cut by a shadow's
	 * edge as 106, against the scaled pass's fallback 88s. */
	const int own = e->s3.det.n_fids;
	if (ok && found >= 0) /* a scan that is not whole: the islands' find is never -1 */
		ok = up_windows(e, grey,
				windows_find_islands(&e->t3.scan, THIRD_UP_WIN_PX, THIRD_SMALL_PAD, e->t3.win,
						     THIRD_MAX_WINDOWS),
				halo, false);
	fallback_reads(e, own, &from);
	ok = ok && (!e->cfg.sharp_up || (up_sharp(e, grey, halo) && up_triple(e, grey, halo))) &&
	     (!e->cfg.fine_up || up_fine(e, grey, halo));
	ok = ok && (!e->cfg.rectify_up || !e->t3.up_deblur || up_rectify(e, grey));
	/* Then (ink_up) the closing pass's ink tiles (windows_find_ink: small
	 * symbols a shadow's edge blackened in the first scale) that no symbol
	 * of this scale holds yet, read by up_ink_part(), its reads over
	 * INK_UP_WHOLE_PX confirmed as the small-symbol pass's unconfirmed
	 * ones are (small_confirm); as fallbacks too, for the same reason.
	 * Over every ink tile it read 3 symbols more of 960 on shadow-small
	 * (seeds 44-48, reacTIVision's set) for about 12 times the
	 * instructions (sun: +27 M a frame against +0.6 M). */
	const int ink = e->s3.det.n_fids;
	if (ok && e->cfg.ink_up && e->t3.up_mean)
		ok = up_windows(e, grey,
				windows_find_ink_unread(&e->t3.scan, &e->s3.det, INK_UP_PAD, THIRD_CLOSE_MIN_RADIUS,
							e->t3.win, THIRD_MAX_WINDOWS),
				halo, true) &&
		     small_confirm(e, grey, ink, true);
	fallback_reads(e, ink, &from);
	/* A lone read of the third scale where an unconfirmed one of
	 * another ID lies (merge.h). */
	merge_contradicted(&e->s3.det, e->t3.failed, e->t3.n_failed);
	return ok && small_check(e, grey, from, 0.0f);
}

/* The third scale's matcher with match_config.even_leaves on (the
 * closing pass) or off again (the other passes). */
static bool third_even_leaves(struct engine *e, bool on)
{
	struct threshold_config tc;
	struct match_config mc;
	third_configs(&e->cfg, &tc, &mc);
	mc.even_leaves = on;
	return match_set_config(e->s3.mat, &mc) == 0;
}

/* The closing pass's reads of its n windows (e->t3.win) by `by`
 * (THIRD_BY_CLOSING or THIRD_BY_CLOSING_DARK): the window's radius is its
 * largest branching region's, and a shadow's band merged with rings there
 * is larger than any symbol in it, so down a ladder of radii, each
 * keeping the symbols its tolerance takes, to the smallest. */
static bool closed_ladders(struct engine *e, const struct image_u8 *grey, int n, const struct windows_radius *rule,
			   int by)
{
	bool ok = true;
	for (int i = 0; i < n && ok; i++) {
		struct window w = e->t3.win[i];
		for (;;) {
			e->t3.stats.closed_windows++;
			e->t3.stats.closed_area_px += (int64_t)(w.x1 - w.x0) * (w.y1 - w.y0);
			ok = third_window(e, grey, &w, 2 * w.radius, NULL, rule, 0, by);
			const int next = w.radius - (2 * THIRD_SCALED_TOLERANCE + 1);
			if (!ok || next + THIRD_SCALED_TOLERANCE < THIRD_CLOSE_MIN_RADIUS)
				break;
			w.radius = next > THIRD_CLOSE_MIN_RADIUS ? next : THIRD_CLOSE_MIN_RADIUS;
		}
	}
	return ok;
}

/* Keeps of d's symbols from `from` on only whole reads: none the hairline
 * round or the completion made (fiducial_det.completed), nor vetoes. */
static void whole_reads(struct detections *d, int from)
{
	int k = from;
	for (int i = from; i < d->n_fids; i++)
		if (d->fids[i].completed == 0)
			d->fids[k++] = d->fids[i];
	d->n_fids = k;
}

/* The closing pass's read at a lower gate (close_dark) of the n windows in
 * e->t3.win, at f0 up to f1 times each window's radius: a rung a factor,
 * its symbols those of about that radius by the rule so widened, whole
 * reads only, standing where no read before holds the place. */
static bool dark_rungs(struct engine *e, const struct image_u8 *grey, int n, int f0, int f1)
{
	bool ok = true;
	for (int f = f0; f <= f1 && ok; f++) {
		const struct windows_radius wide = {e->cfg.close_scale3 * (float)f, THIRD_CLOSE_MIN_RADIUS,
						    THIRD_CLOSE_MAX_RADIUS};
		const int wider = e->s3.det.n_fids;
		for (int i = 0; i < n && ok; i++) {
			struct window w = e->t3.win[i];
			w.radius = w.radius * f < THIRD_CLOSE_MAX_RADIUS ? w.radius * f : THIRD_CLOSE_MAX_RADIUS;
			e->t3.stats.closed_windows++;
			e->t3.stats.closed_area_px += (int64_t)(w.x1 - w.x0) * (w.y1 - w.y0);
			ok = third_window(e, grey, &w, 2 * w.radius, NULL, &wide, 0, THIRD_BY_CLOSING_DARK);
		}
		whole_reads(&e->s3.det, wider);
		fallback_reads(e, wider, NULL);
	}
	return ok;
}

/* The third scale's closing pass (close_scale3): in windows found as for
 * the second pass, each thresholded against the grey closing
 * (threshold/closing.h) on the CPU whatever the backend, with a halo of
 * twice the radius (what the closing reads), at the radius its largest
 * symbol-like region asks for (windows.h) and then down a ladder of
 * smaller ones, each rung keeping the symbols whose own radius is within
 * THIRD_SCALED_TOLERANCE of it. Where a hard shadow's
 * edge crosses a symbol, the local mean still turns a band of the shadowed
 * paper black beside it; the closing follows the light's step. Its symbols
 * follow the other passes' in the scale's detections: where two passes read
 * one place as two IDs, merge_scale() drops both. */
static bool third_closed(struct engine *e, const struct image_u8 *grey)
{
	const struct engine_config *c = &e->cfg;
	if (c->close_scale3 <= 0.0f || !e->t3.close)
		return true;
	const struct windows_radius rule = {c->close_scale3, THIRD_CLOSE_MIN_RADIUS, THIRD_CLOSE_MAX_RADIUS};
	const int n = windows_find(&e->t3.scan, THIRD_PAD, &rule, e->t3.win, THIRD_MAX_WINDOWS);
	/* Its matcher reads a symbol only where its leaves of one colour are
	 * of even areas: in a blurred shadow a blob's thin wall can break
	 * into a sliver beside the blob, a leaf more, while the blob lost a
	 * hole (sheet-half: 9 read as 23). */
	bool ok = third_even_leaves(e, true) && closed_ladders(e, grey, n, &rule, THIRD_BY_CLOSING);
	/* Then the ink that nothing in the first scale explains
	 * (windows_find_ink: small symbols a shadow's edge blackened there),
	 * at the smallest radius, which reads symbols up to about 130 px,
	 * and again a little under close_pct (THIRD_INK_PCT_LESS); their
	 * reads fill empty places only (fallback_reads): elsewhere they would
	 * be a second vote of this pass for its own damaged read (sun,
	 * reacTIVision's set, seed 42 frame 9: a 41 px 88 read as 106 by
	 * both, against the scaled pass's fallback 88), and two of them that
	 * disagree at a place cancel each other there (merge.h). */
	const int m = ok ? windows_find_ink(&e->t3.scan, THIRD_INK_PAD, THIRD_CLOSE_MIN_RADIUS, e->t3.win,
					    THIRD_MAX_WINDOWS)
			 : 0;
	const int own = e->s3.det.n_fids;
	for (int i = 0; i < m && ok; i++) {
		const struct window *w = &e->t3.win[i];
		e->t3.stats.closed_windows++;
		e->t3.stats.closed_area_px += (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		ok = third_window(e, grey, w, 2 * w->radius, NULL, &rule, 0, THIRD_BY_CLOSING) &&
		     third_window(e, grey, w, 2 * w->radius, NULL, &rule, 0, THIRD_BY_CLOSING_LESS);
	}
	fallback_reads(e, own, NULL);
	/* (close_dark) The ink windows at the lower gate too, at their radius
	 * and twice it, as the rungs below: the first scale's regions of a
	 * symbol whose black card a hard shadow's band joined reach past a
	 * symbol's size, so no window of the rule holds it (oblique, seed 60
	 * frame 13: a 65 px 165 half in a shadow, read at twice the ink
	 * windows' radius). */
	if (ok && c->close_dark > 0)
		ok = dark_rungs(e, grey, m, 1, THIRD_INK_DARK_WIDE);
	/* Then (close_dark) the pass's windows again at a lower gate: where
	 * two hard shadows overlap, the paper keeps 6-20 % of the light and
	 * its print, 10-35 grey levels, falls under the gate, so the closing
	 * turns it black with the ink. Whole reads only (none of the hairline
	 * round's or the completion's: at 75 % of the gate one read a 39 px
	 * 122 under a shadow in a lens's corner as 121), each standing only
	 * where no other read holds its place (fallback_reads). */
	if (ok && c->close_dark > 0) {
		const int m2 = windows_find(&e->t3.scan, THIRD_PAD, &rule, e->t3.win, THIRD_MAX_WINDOWS);
		const int dark = e->s3.det.n_fids;
		ok = closed_ladders(e, grey, m2, &rule, THIRD_BY_CLOSING_DARK);
		whole_reads(&e->s3.det, dark);
		fallback_reads(e, dark, NULL);
		/* And each window again at two, then up to THIRD_DARK_WIDE
		 * times its radius (a rung each, its symbols those of about
		 * that radius by the rule so widened, standing where no read
		 * before holds the place): where a black card (a `b` tree)
		 * lies in the overlap, its white amoeba ring keeps 20-30 grey
		 * levels over a card of 5, under the gate, and the closing at
		 * the symbol's radius (3 px for 90 px) cannot fill the black
		 * root, some 60 px across, so the paper it finds there is the
		 * ink. Drawn from reacTIVision's pictures, shadow-dark at
		 * seeds 82-83 lost 7 of 77 such cards of 64 px and more a
		 * shadow's edge crosses, 1 of 70 white ones. Measured
		 * (docs/recognition.md, "Black cards where two shadows
		 * overlap"): a rung at twice the radius read most, one at
		 * three times after it a few more; three or four times
		 * alone, or the closing at the full gate, fewer. */
		ok = ok && dark_rungs(e, grey, m2, 2, THIRD_DARK_WIDE);
	}
	return third_even_leaves(e, false) && ok;
}

/* Starts a pass job on the frame grey: task(arg, 0) on its worker if it
 * has one, else at pass_job_finish(). */
static void pass_job_start(struct pass_job *j, const struct image_u8 *grey, const struct engine *e,
			   void (*task)(void *, int), void *arg)
{
	j->grey = grey;
	j->cfg = &e->cfg;
	j->gate = e->gate;
	j->ok = false;
	j->running = true;
	if (j->pool)
		pool_start(j->pool, task, arg, 1);
}

/* Waits for a started pass job (or runs task now, without a worker) and
 * appends its symbols (out) to d; true when it was not started. */
static bool pass_job_finish(struct pass_job *j, void (*task)(void *, int), void *arg, struct detections *d)
{
	if (!j->running)
		return true;
	j->running = false;
	if (j->pool)
		pool_wait(j->pool);
	else
		task(arg, 0);
	for (int i = 0; i < j->out.n_fids; i++)
		det_append(d, true, &j->out.fids[i]);
	for (int i = 0; i < j->out.n_fuzzy; i++)
		det_append(d, false, &j->out.fuzzy[i]);
	return j->ok;
}

/* The third scale's ratio pass (ratio3, closing_ratio() in
 * threshold/closing.h): the first pass's windows (the whole frame where
 * they would cover half of it) thresholded again by Bernsen's window at
 * the first scale's radius and the configured gate or the frame's where
 * that is higher (a dim frame's lower gate read a 61 px 56 as 17 on the
 * dim preset, and gained 2 of 768 symbols), against the light's ratio instead of its
 * difference, on the CPU whatever the backend, and again at
 * THIRD_RATIO_SMALL_RADIUS. Where a hard shadow's edge crosses a symbol,
 * Bernsen's mean of the window's extremes turns the shadowed paper and
 * white leaves beside the edge black, and the local mean and the closing
 * do the same where the shadow is a hand's finger narrower than the
 * symbol; their ratio to the lit ones is kept. Its matcher reads only
 * symbols whose leaves of one colour are of even areas, as the closing
 * pass's. Its symbols are doubtful (FIDUCIAL_DOUBTFUL, merge.h): the low
 * threshold thins black features, and in small tilted symbols (the
 * sheet-half preset) about one read in seventy was another ID, so a read
 * of the place by any other pass that disagrees leaves neither. With
 * ratio3_large, then each window at THIRD_RATIO_LARGE_RUNGS larger radii
 * for large symbols, kept after the rest (j->large_from; ratio_finish()).
 * Reads j->win into j->out (struct ratio_job). */
static bool ratio_read(struct ratio_job *j);

/* Reads window w at the ratio pass's radius into j->job.out: every
 * symbol, or (large > 0) only symbols, not vetoes, of large to
 * large_max px (0: no bound). */
static bool ratio_window(struct ratio_job *j, const struct window *w, int radius, int gate, int large, int large_max)
{
	const struct engine_config *c = j->job.cfg;
	struct window_cut k = window_cut_into(j->job.grey, w, radius, &j->job.crop, &j->job.mask);
	if (closing_ratio(j->close, &k.view, radius, c->ratio3, gate, &k.crop))
		return false;
	cut_crop(&k, w);
	if (!decode_window(j->job.seg, j->job.mat, &k, &j->job.det))
		return false;
	const struct detections *wd = &j->job.det;
	for (int m = 0; m < wd->n_fids + wd->n_fuzzy; m++) {
		const bool fid = m < wd->n_fids;
		struct fiducial_det f = fid ? wd->fids[m] : wd->fuzzy[m - wd->n_fids];
		if (large > 0 && (!fid || f.completed == FIDUCIAL_VETO || f.size_px < (float)large ||
				  (large_max > 0 && f.size_px >= (float)large_max)))
			continue;
		f.x += (float)w->x0;
		f.y += (float)w->y0;
		f.root = -1;
		f.completed = f.completed == FIDUCIAL_VETO ? FIDUCIAL_VETO : FIDUCIAL_DOUBTFUL;
		det_append(&j->job.out, fid, &f);
	}
	return true;
}

/* Whether window i of the ratio pass is read at a large rung of this
 * radius: one the closing's buffers hold, where a live region spans
 * THIRD_RATIO_LARGE_SIDE times it. */
static bool large_rung(const struct ratio_job *j, int i, int radius)
{
	return radius <= CLOSING_MAX_RADIUS && j->side[i] >= THIRD_RATIO_LARGE_SIDE * radius;
}

/* The gate of the ratio pass's large rung of radius r, the rung's window
 * (2 r + 1)^2 pixels against the first scale's (2 r0 + 1)^2: the range
 * of the sensor's noise over n pixels grows about as sqrt(2 ln n), and a
 * flat, noisy table spans gate over a large rung's window where it spans
 * less over the first scale's. Sharpened webcam frames (the webcam
 * preset, seed 44, frame 3) read whole at radius 16 made more regions
 * than the segmenter holds at the first scale's gate; at 36 none. The
 * light's smooth gradient spans more too, 2 (r - r0) times its slope
 * more: the gate adds that for THIRD_RATIO_LARGE_SLOPE. */
static int large_rung_gate(int gate, int r, int r0)
{
	const double n = (double)(2 * r + 1) * (2 * r + 1), n0 = (double)(2 * r0 + 1) * (2 * r0 + 1);
	const int g = (int)lrint((double)gate * sqrt(log(n) / log(n0)) + 2.0 * THIRD_RATIO_LARGE_SLOPE * (r - r0));
	return g < 255 ? g : 255;
}

static bool ratio_read(struct ratio_job *j)
{
	const struct engine_config *c = j->job.cfg;
	const int gate = j->job.gate > c->thr.gate ? j->job.gate : c->thr.gate;
	const struct image_u8 *grey = j->job.grey;
	detections_clear(&j->job.out);
	const struct window whole = {.x0 = 0, .y0 = 0, .x1 = grey->width, .y1 = grey->height};
	const int n = j->n < 0 ? 1 : j->n;
	for (int i = 0; i < n; i++) {
		const struct window *w = j->n < 0 ? &whole : &j->win[i];
		if (!ratio_window(j, w, c->thr.radius, gate, 0, 0) ||
		    (c->thr.radius != THIRD_RATIO_SMALL_RADIUS &&
		     !ratio_window(j, w, THIRD_RATIO_SMALL_RADIUS, gate, 0, 0)))
			return false;
	}
	merge_vetoes(&j->job.out);
	j->large_from = j->job.out.n_fids;
	for (int i = 0; i < n && c->ratio3_large; i++) {
		const struct window *w = j->n < 0 ? &whole : &j->win[i];
		for (int q = 2; q < 2 + THIRD_RATIO_LARGE_RUNGS && large_rung(j, i, q * c->thr.radius); q++) {
			const int radius = q * c->thr.radius;
			const bool top = q == 1 + THIRD_RATIO_LARGE_RUNGS || !large_rung(j, i, radius + c->thr.radius);
			if (!ratio_window(j, w, radius, large_rung_gate(gate, radius, c->thr.radius),
					  THIRD_RATIO_LARGE_MIN * radius,
					  top ? 0 : THIRD_RATIO_LARGE_MAX * radius))
				return false;
		}
	}
	return true;
}

static void ratio_task(void *arg, int task)
{
	(void)task;
	struct ratio_job *j = arg;
	j->job.ok = ratio_read(j);
}

/* Starts the ratio pass for the scanned frame in the first pass's n
 * windows (e->t3.win; -1: the whole frame), on its worker if it has one. */
static void ratio_start(struct engine *e, const struct image_u8 *grey, int n)
{
	struct ratio_job *j = &e->t3.ratio;
	j->job.running = false;
	j->large_from = -1;
	if (e->cfg.ratio3 <= 0 || !j->job.mat || n == 0)
		return;
	j->n = n;
	if (n > 0)
		memcpy(j->win, e->t3.win, (size_t)n * sizeof *j->win);
	for (int i = 0; i < (n < 0 ? 1 : n) && e->cfg.ratio3_large; i++) {
		const struct window all = {.x0 = 0, .y0 = 0, .x1 = grey->width, .y1 = grey->height};
		j->side[i] = windows_live_side(&e->t3.scan, n < 0 ? &all : &j->win[i]);
	}
	for (int i = 0; i < (j->n < 0 ? 1 : j->n); i++) {
		e->t3.stats.ratio_windows++;
		e->t3.stats.ratio_area_px += j->n < 0 ? (int64_t)grey->width * grey->height
						      : (int64_t)(j->win[i].x1 - j->win[i].x0) * (j->win[i].y1 - j->win[i].y0);
	}
	pass_job_start(&j->job, grey, e, ratio_task, j);
}

/* Waits for the ratio pass (or reads it now, without a worker) and appends
 * its symbols to the third scale's. */
static bool ratio_finish(struct engine *e)
{
	struct ratio_job *j = &e->t3.ratio;
	const int base = e->s3.det.n_fids;
	const bool ok = pass_job_finish(&j->job, ratio_task, j, &e->s3.det);
	/* The large rungs' reads stand only where no read of the third scale
	 * before them (its passes so far, the ratio pass's own other reads)
	 * holds the place, whatever that read's ID: at 6 times their radius
	 * a 102 px symbol of the sheet preset read as another ID there,
	 * and as a doubtful read (merge.h) it cancelled the closing pass's
	 * right one. */
	struct detections *d = &e->s3.det;
	if (j->large_from < 0 || base + j->large_from >= d->n_fids)
		return ok;
	const int held = base + j->large_from;
	int k = held;
	for (int i = held; i < d->n_fids; i++)
		if (merge_near(d->fids, held, &d->fids[i]) < 0)
			d->fids[k++] = d->fids[i];
	d->n_fids = k;
	return ok;
}

/* The whole frame of the deblurring pass, where the last frame's radius
 * rule windows (those of the last frame that had any) were mostly read for
 * a defocus with a median blur of at least THIRD_DEBLUR_FRAME_SIGMA (the
 * camera is out of focus, and its focus is the same over the frame and
 * from frame to frame), in frames of at most THIRD_DEBLUR_FRAME_MAX_PX
 * pixels: deconvolved under that median and thresholded as a window's
 * defocus, every symbol doubtful. It reaches the symbols that no window
 * covers and those whose own window holds too few long steps to read a
 * blur (symbols under about 48 px: a card's margin is 2-3 px). Reads into
 * j->frame.out. */
static bool deblur_frame(struct deblur_job *j)
{
	detections_clear(&j->frame.out);
	const struct image_u8 *g = j->frame.grey;
	const struct window all = {.x0 = 0, .y0 = 0, .x1 = g->width, .y1 = g->height};
	const struct deblur_streak est = {.sigma = j->sigma};
	struct window_cut k = window_cut_into(g, &all, 0, &j->frame.crop, &j->frame.mask);
	/* A defocus is thresholded by Bernsen: the mean's radius (1) is unused. */
	if (deblur_apply(j->frame_deblur, &k.view, NULL, 1, j->frame.cfg->deblur3_bias, j->frame.gate,
			 DEBLUR_DEFOCUS, &est, &k.crop) < 0)
		return false;
	cut_crop(&k, &all);
	if (!decode_window(j->frame.seg, j->frame.mat, &k, &j->frame.det))
		return false;
	window_keep(&j->frame.out, &j->frame.det, &all, NULL, 0, FIDUCIAL_DOUBTFUL);
	return true;
}

static void deblur_frame_task(void *arg, int task)
{
	(void)task;
	struct deblur_job *j = arg;
	j->frame.ok = deblur_frame(j);
}

/* v[0 .. n) sorted; its median (the lower of two). */
static float median_sorted(float *v, int n)
{
	for (int a = 1; a < n; a++)
		for (int b = a; b > 0 && v[b - 1] > v[b]; b--) {
			const float t = v[b];
			v[b] = v[b - 1];
			v[b - 1] = t;
		}
	return v[(n - 1) / 2];
}

/* The blur the rule's windows decided for the next frame's whole-frame
 * read: the median of their defocus blurs (sigma[0 .. n), sorted here,
 * as is sharp, their sharpest steps' blurs) where most of the n_rule
 * windows read one, it is at least THIRD_DEBLUR_FRAME_SIGMA and the
 * median of sharp at least THIRD_DEBLUR_FRAME_SHARP, else 0. */
static float deblur_decide(float *sigma, float *sharp, int n, int n_rule)
{
	if (2 * n <= n_rule)
		return 0.0f;
	const float m = median_sorted(sigma, n);
	return m >= THIRD_DEBLUR_FRAME_SIGMA && median_sorted(sharp, n) >= THIRD_DEBLUR_FRAME_SHARP ? m : 0.0f;
}

/* The reads of a streaked window whose grey k holds deconvolved under
 * est (its decode in j->job.det), into d: at the window's radius by the
 * rule (completed reads), then, where the streak is plain and long enough
 * (and the window not streaked: a saturated root's), at the lower and
 * upper rungs (fallbacks). */
static bool streak_reads(struct deblur_job *j, struct window_cut *k, const struct window *w,
			 const struct windows_radius *rule, const struct deblur_streak *est, bool streaked,
			 struct detections *d)
{
	const struct engine_config *c = j->job.cfg;
	window_keep(d, &j->job.det, w, rule, 0, 1);
	/* The streak's grey once more at THIRD_DEBLUR_LOW_RADIUS, where the
	 * streak is unmistakable: a symbol the window's radius loses there
	 * (it spans the streak's ghosts) is read as a fallback. A window of
	 * that radius has just been read at it: its reads are kept again,
	 * without the rule. */
	if (streaked || est->anisotropy > THIRD_DEBLUR_LOW_ANISOTROPY || est->length < THIRD_DEBLUR_RUNG_MIN_LENGTH)
		return true;
	if (w->radius != THIRD_DEBLUR_LOW_RADIUS) {
		if (deblur_rethreshold(j->deblur, THIRD_DEBLUR_LOW_RADIUS, c->deblur3_bias, j->job.gate,
				       &k->crop) != 0)
			return true;
		cut_crop(k, w);
		if (!decode_window(j->job.seg, j->job.mat, k, &j->job.det))
			return false;
	}
	window_keep(d, &j->job.det, w, NULL, 0, FIDUCIAL_FALLBACK);
	/* The upper rung (THIRD_DEBLUR_HIGH_RADIUS): fallbacks too, its
	 * matcher reading whole trees only and holding a read that may be
	 * another ID with a one-hole blob closed (match_config.closed_leaf). */
	if (!c->deblur3_high || w->radius >= THIRD_DEBLUR_HIGH_RADIUS ||
	    deblur_rethreshold(j->deblur, THIRD_DEBLUR_HIGH_RADIUS, c->deblur3_bias, j->job.gate, &k->crop) != 0)
		return true;
	cut_crop(k, w);
	struct match_config high = j->mc;
	high.closed_leaf = true;
	bool ok = match_set_config(j->job.mat, &high) == 0 &&
		  decode_window(j->job.seg, j->job.mat, k, &j->job.det);
	ok = match_set_config(j->job.mat, &j->mc) == 0 && ok;
	if (!ok)
		return false;
	window_keep(d, &j->job.det, w, NULL, 0, FIDUCIAL_FALLBACK);
	return true;
}

/* The window k again with rounds rounds, its deconvolution taken on
 * (deblur_continue): first at THIRD_DEBLUR_CONFIRM_ROUNDS fewer (not
 * under DEBLUR_ITERATIONS), then at rounds, each read by streak_reads();
 * the second's symbols join the pass's as fallbacks, a rung's only where
 * the first read its ID within 0.3 of its size. */
static bool long_reads(struct deblur_job *j, struct window_cut *k, const struct window *w,
		       const struct windows_radius *rule, const struct deblur_streak *est, bool streaked, int rounds)
{
	const struct engine_config *c = j->job.cfg;
	struct detections *fewer = &j->fewer, *longer = &j->longer;
	detections_clear(fewer);
	detections_clear(longer);
	const int first = rounds - THIRD_DEBLUR_CONFIRM_ROUNDS > DEBLUR_ITERATIONS
				  ? rounds - THIRD_DEBLUR_CONFIRM_ROUNDS
				  : DEBLUR_ITERATIONS;
	for (int pass = 0; pass < 2; pass++) {
		if (deblur_continue(j->deblur, pass ? rounds : first, w->radius, c->deblur3_bias, j->job.gate,
				    &k->crop) != 0)
			return true;
		cut_crop(k, w);
		if (!decode_window(j->job.seg, j->job.mat, k, &j->job.det) ||
		    !streak_reads(j, k, w, rule, est, streaked, pass ? longer : fewer))
			return false;
	}
	for (int q = 0; q < longer->n_fids; q++) {
		struct fiducial_det f = longer->fids[q];
		bool confirmed = f.completed != FIDUCIAL_FALLBACK;
		for (int r = 0; r < fewer->n_fids && !confirmed; r++) {
			const struct fiducial_det *g = &fewer->fids[r];
			confirmed = g->id == f.id && hypotf(g->x - f.x, g->y - f.y) <= 0.3f * f.size_px;
		}
		if (!confirmed)
			continue;
		f.completed = FIDUCIAL_FALLBACK;
		det_append(&j->job.out, true, &f);
	}
	return true;
}

/* The reads of a window whose grey k holds deconvolved for a defocus (its
 * decode in j->job.det), into j->job.out, all doubtful: that decode's;
 * where it holds none, the same grey encoded (deblur_rethreshold_encoded:
 * Bernsen's midpoint lower in linear light, where a blurred hole or wall
 * stayed short of the plain one); where that reads none either, the same
 * two at each of third_defocus_rounds in turn. */
static bool defocus_reads(struct deblur_job *j, struct window_cut *k, const struct window *w)
{
	const struct engine_config *c = j->job.cfg;
	const int from = j->job.out.n_fids;
	const size_t n_more = sizeof third_defocus_rounds / sizeof *third_defocus_rounds;
	for (size_t r = 0;; r++) {
		window_keep(&j->job.out, &j->job.det, w, NULL, 0, FIDUCIAL_DOUBTFUL);
		if (j->job.out.n_fids > from || deblur_rethreshold_encoded(j->deblur, j->job.gate, &k->crop) != 0)
			return true;
		cut_crop(k, w);
		if (!decode_window(j->job.seg, j->job.mat, k, &j->job.det))
			return false;
		window_keep(&j->job.out, &j->job.det, w, NULL, 0, FIDUCIAL_DOUBTFUL);
		if (j->job.out.n_fids > from || r == n_more ||
		    deblur_continue(j->deblur, third_defocus_rounds[r], w->radius, c->deblur3_bias, j->job.gate,
				    &k->crop) != 0)
			return true;
		cut_crop(k, w);
		if (!decode_window(j->job.seg, j->job.mat, k, &j->job.det))
			return false;
	}
}

/* The third scale's deblurring pass (deblur3, threshold/deblur.h): in the
 * second pass's windows (mean_scale3's radius rule, padded by
 * THIRD_DEBLUR_PAD), each window in which a streak is found is deconvolved
 * and thresholded by the local mean at the window's radius, keeping the
 * symbols whose own radius is the window's (as the second pass), marked
 * completed (a symbol another scale or pass read whole stands against
 * them), and where the streak is plain (THIRD_DEBLUR_LOW_ANISOTROPY, THIRD_DEBLUR_RUNG_MIN_LENGTH) once
 * more at THIRD_DEBLUR_LOW_RADIUS, keeping every symbol as a fallback (standing only where no
 * other read holds the place), and where none of those reads a symbol and
 * the streak is long, once more with more rounds (long_reads()); with defocus3, each window with no streak
 * but a defocus blur is deconvolved and thresholded by Bernsen at
 * deblur.h's radius, keeping every symbol (that threshold has no radius
 * by the symbol's size) as doubtful (any other read of another ID at the place cancels both). The
 * window is deconvolved with deblur.h's context around it; the halo (the
 * mean's radius and THIRD_DEBLUR_HALO) gives the threshold's mean its
 * context past the window's edge. Reads j->win into j->job.out (struct
 * deblur_job), and decides from the rule's windows' defocus blurs the blur
 * of the next frame's whole-frame read (j->next, deblur_decide()). */
static bool deblur_read(struct deblur_job *j)
{
	const struct engine_config *c = j->job.cfg;
	const struct windows_radius rule = {c->mean_scale3, THIRD_SCALED_MIN_RADIUS, THIRD_SCALED_MAX_RADIUS};
	detections_clear(&j->job.out);
	j->streaks = j->defocused = j->small_read = j->small_area = 0;
	float sigma[THIRD_MAX_WINDOWS], sharp[THIRD_MAX_WINDOWS]; /* the rule's windows' defocus blurs, sharpest steps' */
	int n_sigma = 0;
	bool out_of_focus = false; /* by the rule's windows (the small windows') */
	for (int i = 0; i < j->n; i++) {
		const struct window *w = &j->win[i];
		const int64_t area = (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		const bool streaked = i >= j->n_rule && i < j->n_streaked;
		if (i >= j->n_streaked) {
			/* The small windows: only where the rule's windows
			 * found the frame out of focus (most of them read a
			 * defocus, and their print is not sharp, as the
			 * whole frame asks: THIRD_DEBLUR_FRAME_SHARP), and
			 * within a bound of their own. */
			if (i == j->n_streaked)
				out_of_focus = 2 * j->defocused > j->n_rule &&
					       median_sorted(sharp, n_sigma) >= THIRD_DEBLUR_FRAME_SHARP;
			if (!out_of_focus || (j->budget >= 0 && j->small_area + area > j->budget))
				break;
			j->small_read++;
			j->small_area += area;
		}
		struct window_cut k =
			window_cut_into(j->job.grey, w, w->radius + THIRD_DEBLUR_HALO, &j->job.crop, &j->job.mask);
		const struct deblur_box core = {w->x0 - k.cx0, w->y0 - k.cy0, w->x1 - k.cx0, w->y1 - k.cy0};
		struct deblur_streak est;
		const int found = deblur_process(j->deblur, &k.view, &core, w->radius, c->deblur3_bias, j->job.gate,
						 c->defocus3, &k.crop, &est);
		if (found < 0)
			return false;
		if (found == 0 || (i >= j->n_streaked && found != DEBLUR_DEFOCUS) || (streaked && found != DEBLUR_STREAK))
			continue;
		if (found == DEBLUR_DEFOCUS && i < j->n_rule) {
			sharp[n_sigma] = est.sharp;
			sigma[n_sigma++] = est.sigma;
		}
		j->streaks += found == DEBLUR_STREAK;
		j->defocused += found == DEBLUR_DEFOCUS;
		cut_crop(&k, w);
		if (!decode_window(j->job.seg, j->job.mat, &k, &j->job.det))
			return false;
		if (found == DEBLUR_DEFOCUS) {
			const int from = j->job.out.n_fids;
			if (!defocus_reads(j, &k, w))
				return false;
			/* Where none of those read a symbol, the window's grey
			 * encoded (DEBLUR_ENCODE_INPUT_GAMMA) is deconvolved
			 * again and read as the first (defocus_reads). */
			if (j->job.out.n_fids > from)
				continue;
			struct deblur_streak again;
			const int kind = deblur_process_encoded(j->deblur, &k.view, &core, w->radius, c->deblur3_bias,
								 j->job.gate, &k.crop, &again);
			if (kind < 0)
				return false;
			if (kind != DEBLUR_DEFOCUS)
				continue;
			cut_crop(&k, w);
			if (!decode_window(j->job.seg, j->job.mat, &k, &j->job.det) || !defocus_reads(j, &k, w))
				return false;
			continue;
		}
		const int from = j->job.out.n_fids;
		if (!streak_reads(j, &k, w, &rule, &est, streaked, &j->job.out))
			return false;
		/* A longer streak: where those rounds read no symbol, more
		 * (THIRD_DEBLUR_CONFIRM_ROUNDS). */
		const int rounds = deblur_long_rounds(est.length);
		if (rounds > 0 && j->job.out.n_fids == from &&
		    !long_reads(j, &k, w, &rule, &est, streaked, rounds))
			return false;
	}
	j->next = deblur_decide(sigma, sharp, n_sigma, j->n_rule);
	return true;
}

static void deblur_task(void *arg, int task)
{
	(void)task;
	struct deblur_job *j = arg;
	j->job.ok = deblur_read(j);
}

/* Starts the deblurring pass for the scanned frame, on its worker if it
 * has one. Its windows are taken in their order while their area stays
 * within deblur3_pct of the frame's: a bound on what the pass can cost a
 * frame. */
static void deblur_start(struct engine *e, const struct image_u8 *grey)
{
	const struct engine_config *c = &e->cfg;
	struct deblur_job *j = &e->t3.deblur;
	j->job.running = false;
	if (!j->job.mat)
		return;
	const struct windows_radius rule = {c->mean_scale3, THIRD_SCALED_MIN_RADIUS, THIRD_SCALED_MAX_RADIUS};
	const int n = windows_find(&e->t3.scan, THIRD_DEBLUR_PAD, &rule, j->win, THIRD_MAX_WINDOWS);
	const int64_t budget = c->deblur3_pct > 0 ? (int64_t)grey->width * grey->height * c->deblur3_pct / 100 : -1;
	int64_t used = 0;
	j->n = 0;
	for (int i = 0; i < n; i++) {
		const struct window *w = &j->win[i];
		used += (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		if (budget >= 0 && used > budget) {
			e->t3.stats.deblur_skipped += n - i;
			break;
		}
		e->t3.stats.deblur_windows++;
		e->t3.stats.deblur_area_px += (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
		j->n++;
	}
	j->n_rule = j->n;
	/* Streaked roots that no branching region put in a window
	 * (windows_find_saturated), apart from the rule's windows and within
	 * what their area left of the budget: read for a streak only, at the
	 * rule's radius alone (deblur_read). */
	if (n >= 0 && j->n == n && n < THIRD_MAX_WINDOWS) {
		const int m =
			windows_find_saturated(&e->t3.scan, THIRD_DEBLUR_PAD, &rule, j->win + n, THIRD_MAX_WINDOWS - n);
		for (int i = n; i < n + m; i++) {
			const struct window *w = &j->win[i];
			const int64_t area = (int64_t)(w->x1 - w->x0) * (w->y1 - w->y0);
			bool apart = budget < 0 || used + area <= budget;
			for (int k = 0; k < n && apart; k++)
				apart = !windows_overlap(&j->win[k], w);
			if (!apart)
				continue;
			used += area;
			e->t3.stats.deblur_windows++;
			e->t3.stats.deblur_area_px += area;
			j->win[j->n++] = *w;
		}
	}
	j->n_streaked = j->n;
	/* Small structure's windows (windows_find_small's), for a defocus
	 * only: under a blur that erases a small symbol's leaves, its tree no
	 * longer branches as windows_find's rule asks. */
	j->budget = budget;
	if (c->defocus3 && j->n_rule > 0 && j->n < THIRD_MAX_WINDOWS) {
		const int m = windows_find_small(&e->t3.scan, THIRD_UP_WIN_PX, THIRD_DEBLUR_SMALL_PAD, j->win + j->n,
						 THIRD_MAX_WINDOWS - j->n);
		for (int i = 0; i < m; i++)
			j->win[j->n + i].radius = THIRD_DEBLUR_SMALL_RADIUS;
		j->n += m > 0 ? m : 0;
	}
	if (j->n == 0)
		return;
	/* The whole frame, under the blur the last frame decided (taken
	 * before the windows' job decides the next), beside the windows. */
	j->sigma = j->frame_deblur && grey->width == c->width && grey->height == c->height ? j->next : 0.0f;
	pass_job_start(&j->job, grey, e, deblur_task, j);
	if (j->sigma > 0.0f)
		pass_job_start(&j->frame, grey, e, deblur_frame_task, j);
}

/* Waits for the deblurring pass (or reads it now, without a worker) and
 * appends its symbols to the third scale's. */
static bool deblur_finish(struct engine *e)
{
	struct deblur_job *j = &e->t3.deblur;
	const bool ran = j->job.running, whole = j->frame.running;
	bool ok = pass_job_finish(&j->job, deblur_task, j, &e->s3.det);
	ok = pass_job_finish(&j->frame, deblur_frame_task, j, &e->s3.det) && ok;
	if (ran) {
		e->t3.stats.deblur_streaks += j->streaks;
		e->t3.stats.deblur_defocused += j->defocused;
		e->t3.stats.deblur_frames += whole;
		e->t3.stats.deblur_windows += j->small_read;
		e->t3.stats.deblur_area_px += j->small_area;
	}
	return ok;
}
