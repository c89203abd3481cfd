//! The forward pass of Universal Sentence Encoder Multilingual v3 (the
//! CNN variant) as its weights are published in plain arrays: a quantized
//! token table, a projection into three n-gram branches (2, 3 and 5 tokens)
//! of two residual convolution layers each, a layer norm over the tokens'
//! features, their sum projected and scaled by 1/sqrt(tokens), and a small
//! feed-forward network with skip connections to 512 numbers, tanh and unit
//! length.

use std::collections::HashMap;

use crate::npz::Array;

pub const DIM: usize = 512;
const CNN: usize = 256;
const CHUNKS: usize = 17;
/// (n-gram order, tokens of left context) of the three branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const FEATS: usize = DIM + ORDERS.len() * CNN;

/// A row-major matrix.
struct Mat {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

pub struct Encoder {
    /// The token table in 17 chunks (row `id` is row `id / 17` of chunk
    /// `id % 17`), one byte per number: `q * scale[chunk] + lo[chunk]`.
    table: Vec<Vec<u8>>,
    scale: Vec<f32>,
    lo: Vec<f32>,
    vocab: usize,
    proj: Mat,
    proj_b: Vec<f32>,
    ln_proj: (Vec<f32>, Vec<f32>),
    w1: Vec<Mat>,
    b1: Vec<Vec<f32>>,
    w2: Vec<Mat>,
    b2: Vec<Vec<f32>>,
    ln: (Vec<f32>, Vec<f32>),
    cnn: Mat,
    cnn_b: Vec<f32>,
    d0: Mat,
    d1: Mat,
    d2: Mat,
    d3: Mat,
    p1: Mat,
    p3: Mat,
    eps: f32,
}

#[derive(Debug, thiserror::Error)]
#[error("the weights do not fit the model: {0}")]
pub struct ShapeError(String);

fn take(arrays: &mut HashMap<String, Array>, name: &str) -> Result<Array, ShapeError> {
    arrays
        .remove(name)
        .ok_or_else(|| ShapeError(format!("no array `{name}`")))
}

fn vector(
    arrays: &mut HashMap<String, Array>,
    name: &str,
    len: usize,
) -> Result<Vec<f32>, ShapeError> {
    let a = take(arrays, name)?;
    let v = a
        .f32s()
        .ok_or_else(|| ShapeError(format!("`{name}` is {}, not float", a.dtype)))?;
    if v.len() != len {
        return Err(ShapeError(format!(
            "`{name}` has {} numbers, not {len}",
            v.len()
        )));
    }
    Ok(v)
}

fn matrix(
    arrays: &mut HashMap<String, Array>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<Mat, ShapeError> {
    let a = take(arrays, name)?;
    if a.shape != [rows, cols] {
        return Err(ShapeError(format!(
            "`{name}` is {:?}, not [{rows}, {cols}]",
            a.shape
        )));
    }
    let data = a
        .f32s()
        .ok_or_else(|| ShapeError(format!("`{name}` is {}, not float", a.dtype)))?;
    Ok(Mat { rows, cols, data })
}

fn concat_cols(parts: Vec<Mat>) -> Mat {
    let rows = parts[0].rows;
    let cols: usize = parts.iter().map(|p| p.cols).sum();
    let mut data = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        for p in &parts {
            data.extend_from_slice(&p.data[r * p.cols..(r + 1) * p.cols]);
        }
    }
    Mat { rows, cols, data }
}

/// `c = a · b + beta · c` for one row `a`: `b`'s rows scaled by `a`'s
/// numbers and summed, `b` read once and a zero's row not at all (a matrix
/// product first copies `b` into blocks, which for one row costs more than
/// the product; after a ReLU many numbers are zeros).
fn row_times(a: &[f32], b: &Mat, c: &mut [f32], beta: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has AVX2 and FMA (checked just above).
        return unsafe { row_times_fma(a, b, c, beta) };
    }
    row_times_with(a, b, c, beta, |x, r, c| x * r + c);
}

#[inline(always)]
fn row_times_with(
    a: &[f32],
    b: &Mat,
    c: &mut [f32],
    beta: f32,
    fma: impl Fn(f32, f32, f32) -> f32,
) {
    debug_assert_eq!((a.len(), c.len()), (b.rows, b.cols));
    if beta == 0.0 {
        c.fill(0.0);
    } else if beta != 1.0 {
        c.iter_mut().for_each(|x| *x *= beta);
    }
    for (&x, row) in a.iter().zip(b.data.chunks_exact(b.cols)) {
        if x != 0.0 {
            for (c, &r) in c.iter_mut().zip(row) {
                *c = fma(x, r, *c);
            }
        }
    }
}

/// [`row_times`] compiled for AVX2 with fused multiply-adds.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn row_times_fma(a: &[f32], b: &Mat, c: &mut [f32], beta: f32) {
    row_times_with(a, b, c, beta, f32::mul_add);
}

/// `c = a · b + beta · c` for row-major `a` (m × k) and `b` (k × n).
fn gemm(a: &[f32], m: usize, b: &Mat, c: &mut [f32], beta: f32) {
    if m == 1 {
        return row_times(a, b, c, beta);
    }
    let (k, n) = (b.rows, b.cols);
    debug_assert_eq!(a.len(), m * k);
    debug_assert_eq!(c.len(), m * n);
    // SAFETY: the slices hold m × k, k × n and m × n numbers, row-major
    // with the strides given, and `c` does not overlap `a` or `b`.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            1.0,
            a.as_ptr(),
            k as isize,
            1,
            b.data.as_ptr(),
            n as isize,
            1,
            beta,
            c.as_mut_ptr(),
            n as isize,
            1,
        );
    }
}

fn layer_norm(rows: &mut [f32], width: usize, (gamma, beta): &(Vec<f32>, Vec<f32>), eps: f32) {
    for row in rows.chunks_exact_mut(width) {
        let mean = row.iter().sum::<f32>() / width as f32;
        row.iter_mut().for_each(|x| *x -= mean);
        let var = row.iter().map(|x| x * x).sum::<f32>() / width as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((x, g), b) in row.iter_mut().zip(gamma).zip(beta) {
            *x = *x * inv * g + b;
        }
    }
}

fn relu(v: &mut [f32]) {
    v.iter_mut().for_each(|x| *x = x.max(0.0));
}

fn add_rows(rows: &mut [f32], bias: &[f32]) {
    for row in rows.chunks_exact_mut(bias.len()) {
        row.iter_mut().zip(bias).for_each(|(x, b)| *x += b);
    }
}

impl Encoder {
    pub fn new(mut arrays: HashMap<String, Array>) -> Result<Encoder, ShapeError> {
        let a = &mut arrays;
        let scale = vector(a, "scale", CHUNKS)?;
        let lo = vector(a, "lo", CHUNKS)?;
        let mut table = Vec::with_capacity(CHUNKS);
        let mut rows = None;
        for i in 0..CHUNKS {
            let q = take(a, &format!("q{}", i + 1))?;
            if q.dtype != "|u1" || q.shape.len() != 2 || q.shape[1] != DIM {
                return Err(ShapeError(format!(
                    "`q{}` is {} {:?}",
                    i + 1,
                    q.dtype,
                    q.shape
                )));
            }
            if *rows.get_or_insert(q.shape[0]) != q.shape[0] {
                return Err(ShapeError("the table's chunks differ in size".into()));
            }
            table.push(q.data);
        }
        let vocab = rows.unwrap_or(0) * CHUNKS;
        let proj = concat_cols(
            ["proj2", "proj3", "proj5"]
                .iter()
                .map(|n| matrix(a, n, DIM, CNN))
                .collect::<Result<_, _>>()?,
        );
        let cat =
            |a: &mut HashMap<String, Array>, names: [&str; 3]| -> Result<Vec<f32>, ShapeError> {
                let mut v = Vec::new();
                for n in names {
                    v.extend(vector(a, n, CNN)?);
                }
                Ok(v)
            };
        let proj_b = cat(a, ["proj_b2", "proj_b3", "proj_b5"])?;
        let ln_proj = (
            cat(a, ["ln_g2", "ln_g3", "ln_g5"])?,
            cat(a, ["ln_b2", "ln_b3", "ln_b5"])?,
        );
        let (mut w1, mut b1, mut w2, mut b2) = (vec![], vec![], vec![], vec![]);
        for (n, _) in ORDERS {
            w1.push(matrix(a, &format!("w1_{n}"), n * CNN, CNN)?);
            b1.push(vector(a, &format!("b1_{n}"), CNN)?);
            w2.push(matrix(a, &format!("w2_{n}"), n * CNN, CNN)?);
            b2.push(vector(a, &format!("b2_{n}"), CNN)?);
        }
        let eps = vector(a, "eps", 1)?[0];
        Ok(Encoder {
            table,
            scale,
            lo,
            vocab,
            proj,
            proj_b,
            ln_proj,
            w1,
            b1,
            w2,
            b2,
            ln: (vector(a, "ln_g", FEATS)?, vector(a, "ln_b", FEATS)?),
            cnn: matrix(a, "cnn_W", FEATS, DIM)?,
            cnn_b: vector(a, "cnn_b", DIM)?,
            d0: matrix(a, "d0", DIM, 320)?,
            d1: matrix(a, "d1", 320, 320)?,
            d2: matrix(a, "d2", 320, DIM)?,
            d3: matrix(a, "d3", DIM, DIM)?,
            p1: matrix(a, "p1", DIM, 320)?,
            p3: matrix(a, "p3", 320, DIM)?,
            eps,
        })
    }

    pub fn vocab(&self) -> usize {
        self.vocab
    }

    /// The unit-length vector of one text's token ids.
    pub fn encode(&self, ids: &[u32]) -> [f32; DIM] {
        let t = ids.len().max(1);
        let mut feats = vec![0f32; t * FEATS];
        for (row, &id) in feats.chunks_exact_mut(FEATS).zip(ids) {
            let id = (id as usize).min(self.vocab - 1);
            let c = id % CHUNKS;
            let q = &self.table[c][(id / CHUNKS) * DIM..][..DIM];
            for (x, &b) in row[..DIM].iter_mut().zip(q) {
                *x = f32::from(b) * self.scale[c] + self.lo[c];
            }
        }
        let mut emb = vec![0f32; t * DIM];
        for (e, row) in emb.chunks_exact_mut(DIM).zip(feats.chunks_exact(FEATS)) {
            e.copy_from_slice(&row[..DIM]);
        }
        let width = ORDERS.len() * CNN;
        let mut x = vec![0f32; t * width];
        gemm(&emb, t, &self.proj, &mut x, 0.0);
        add_rows(&mut x, &self.proj_b);
        layer_norm(&mut x, width, &self.ln_proj, self.eps);
        for (i, &(n, left)) in ORDERS.iter().enumerate() {
            let xs: Vec<f32> = x
                .chunks_exact(width)
                .flat_map(|r| r[i * CNN..(i + 1) * CNN].iter().copied())
                .collect();
            let mut h = self.conv(&xs, t, n, left, &self.w1[i], &self.b1[i]);
            h.iter_mut().zip(&xs).for_each(|(a, b)| *a += b);
            let mut c2 = self.conv(&h, t, n, left, &self.w2[i], &self.b2[i]);
            c2.iter_mut().zip(&h).for_each(|(a, b)| *a += b);
            for (row, c) in feats.chunks_exact_mut(FEATS).zip(c2.chunks_exact(CNN)) {
                row[DIM + i * CNN..DIM + (i + 1) * CNN].copy_from_slice(c);
            }
        }
        layer_norm(&mut feats, FEATS, &self.ln, self.eps);
        let mut sum = vec![0f32; FEATS];
        for row in feats.chunks_exact(FEATS) {
            sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
        }
        let mut mean = vec![0f32; DIM];
        gemm(&sum, 1, &self.cnn, &mut mean, 0.0);
        let scale = 1.0 / (t as f32).sqrt();
        for (m, b) in mean.iter_mut().zip(&self.cnn_b) {
            *m = (*m + t as f32 * b) * scale;
        }
        let mut y0 = vec![0f32; 320];
        gemm(&mean, 1, &self.d0, &mut y0, 0.0);
        relu(&mut y0);
        let mut y1 = vec![0f32; 320];
        gemm(&mean, 1, &self.p1, &mut y1, 0.0);
        gemm(&y0, 1, &self.d1, &mut y1, 1.0);
        relu(&mut y1);
        let mut y2 = vec![0f32; DIM];
        gemm(&y1, 1, &self.d2, &mut y2, 0.0);
        relu(&mut y2);
        let mut z = [0f32; DIM];
        gemm(&y1, 1, &self.p3, &mut z, 0.0);
        gemm(&y2, 1, &self.d3, &mut z, 1.0);
        z.iter_mut().for_each(|v| *v = v.tanh());
        let norm = z.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v /= norm);
        z
    }

    /// One convolution over the tokens' `CNN`-wide rows: each token sees
    /// `n` tokens from `left` before it (zeros past either end), then
    /// ReLU.
    fn conv(&self, rows: &[f32], t: usize, n: usize, left: usize, w: &Mat, b: &[f32]) -> Vec<f32> {
        let mut win = vec![0f32; t * n * CNN];
        for (tok, out) in win.chunks_exact_mut(n * CNN).enumerate() {
            for k in 0..n {
                let Some(pos) = (tok + k).checked_sub(left).filter(|&p| p < t) else {
                    continue;
                };
                out[k * CNN..(k + 1) * CNN].copy_from_slice(&rows[pos * CNN..(pos + 1) * CNN]);
            }
        }
        let mut h = vec![0f32; t * CNN];
        gemm(&win, t, w, &mut h, 0.0);
        add_rows(&mut h, b);
        relu(&mut h);
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mat(rows: usize, cols: usize, seed: usize) -> Mat {
        let data = (0..rows * cols)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 - 1001.0) / 997.0)
            .collect();
        Mat { rows, cols, data }
    }

    #[test]
    fn one_row_times_a_matrix_is_the_matrix_product() {
        let b = mat(37, 29, 1);
        let mut a = mat(1, 37, 2).data;
        a[3] = 0.0;
        a[10] = 0.0;
        for beta in [0.0, 1.0, 0.5] {
            let start = mat(1, 29, 3).data;
            let mut want = start.clone();
            for (j, w) in want.iter_mut().enumerate() {
                *w = beta * *w + (0..37).map(|i| a[i] * b.data[i * 29 + j]).sum::<f32>();
            }
            let mut got = start;
            gemm(&a, 1, &b, &mut got, beta);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-4, "{g} vs {w} (beta {beta})");
            }
        }
    }
}
