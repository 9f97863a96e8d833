;; The AR(p) recursion of copula-autoregression.ts over a block of frames, in WebAssembly with
;; 128-bit SIMD (two f64 lanes): the dot product is most of a simulated frame, and JavaScript has
;; no vector arithmetic. The sums are those of dotProduct (src-shared/calibrators/dot-product.ts)
;; in the same order: four partial sums s0..s3 over j = 0, 4, 8, ... (s0 and s1 in the lanes of
;; one vector, s2 and s3 in another), the p mod 4 last terms added to s0 one by one, then
;; (s0 + s1) + (s2 + s3); WebAssembly's f64 arithmetic is IEEE 754 with round-to-nearest and no
;; fused multiply-add, so every score is bit for bit the one JavaScript computes.
;; The source of autoregression-kernel-wasm.ts: `node tools/build-wasm.mjs` assembles it (wabt),
;; and tests/unit/autoregression-kernel.test.ts checks the two agree.
(module
  (import "kernel" "memory" (memory 1))
  ;; For t in [0, count): z = block[t] + sum_j coefficients[j] * lags[at + j]; block[t] = z; the
  ;; ring steps back one (at = at - 1 mod p) and z is written at at and at + p, so the next frame
  ;; reads its p lags, the newest first, with no wrap-around. Addresses are in bytes; returns at.
  (func (export "autoregress")
    (param $p i32) (param $coefficients i32) (param $lags i32) (param $block i32)
    (param $count i32) (param $at i32) (result i32)
    (local $t i32) (local $j i32) (local $groups i32) (local $lag i32) (local $frame i32)
    (local $s01 v128) (local $s23 v128) (local $s0 f64) (local $z f64)
    ;; bytes covered by the groups of four: j + 3 < p
    (local.set $groups (i32.shl (i32.and (local.get $p) (i32.const -4)) (i32.const 3)))
    (block $done
      (loop $frames
        (br_if $done (i32.ge_u (local.get $t) (local.get $count)))
        (local.set $lag (i32.add (local.get $lags) (i32.shl (local.get $at) (i32.const 3))))
        (local.set $s01 (v128.const f64x2 0 0))
        (local.set $s23 (v128.const f64x2 0 0))
        (local.set $j (i32.const 0))
        (block $grouped
          (loop $group
            (br_if $grouped (i32.ge_u (local.get $j) (local.get $groups)))
            (local.set $s01
              (f64x2.add (local.get $s01)
                (f64x2.mul
                  (v128.load (i32.add (local.get $coefficients) (local.get $j)))
                  (v128.load (i32.add (local.get $lag) (local.get $j))))))
            (local.set $s23
              (f64x2.add (local.get $s23)
                (f64x2.mul
                  (v128.load offset=16 (i32.add (local.get $coefficients) (local.get $j)))
                  (v128.load offset=16 (i32.add (local.get $lag) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 32)))
            (br $group)))
        (local.set $s0 (f64x2.extract_lane 0 (local.get $s01)))
        (block $tailed
          (loop $tail
            (br_if $tailed (i32.ge_u (local.get $j) (i32.shl (local.get $p) (i32.const 3))))
            (local.set $s0
              (f64.add (local.get $s0)
                (f64.mul
                  (f64.load (i32.add (local.get $coefficients) (local.get $j)))
                  (f64.load (i32.add (local.get $lag) (local.get $j))))))
            (local.set $j (i32.add (local.get $j) (i32.const 8)))
            (br $tail)))
        (local.set $frame (i32.add (local.get $block) (i32.shl (local.get $t) (i32.const 3))))
        (local.set $z
          (f64.add (f64.load (local.get $frame))
            (f64.add
              (f64.add (local.get $s0) (f64x2.extract_lane 1 (local.get $s01)))
              (f64.add (f64x2.extract_lane 0 (local.get $s23)) (f64x2.extract_lane 1 (local.get $s23))))))
        (f64.store (local.get $frame) (local.get $z))
        (if (i32.gt_u (local.get $p) (i32.const 0))
          (then
            (local.set $at
              (select
                (i32.sub (local.get $p) (i32.const 1))
                (i32.sub (local.get $at) (i32.const 1))
                (i32.eqz (local.get $at))))
            (local.set $lag (i32.add (local.get $lags) (i32.shl (local.get $at) (i32.const 3))))
            (f64.store (local.get $lag) (local.get $z))
            (f64.store (i32.add (local.get $lag) (i32.shl (local.get $p) (i32.const 3))) (local.get $z))))
        (local.set $t (i32.add (local.get $t) (i32.const 1)))
        (br $frames)))
    (local.get $at)))
