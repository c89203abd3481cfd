//! The forward pass of Universal Sentence Encoder Multilingual v3 (the
//! CNN variant) as its weights are published in plain arrays: a quantized
//! token table, a projection into three n-gram branches (2, 3 and 5 tokens)
//! of two residual convolution layers each, a layer norm over the tokens'
//! features, their sum projected and scaled by 1/sqrt(tokens), and a small
//! feed-forward network with skip connections to 512 numbers, tanh and unit
//! length.

use std::collections::HashMap;
use std::sync::Arc;

use crate::npz::Array;

pub const DIM: usize = 512;
const CNN: usize = 256;
const CHUNKS: usize = 17;
/// (n-gram order, tokens of left context) of the three branches.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const FEATS: usize = DIM + ORDERS.len() * CNN;

/// The bytes the encoder's numbers live in: its own, or a file of the
/// state folder mapped into memory, whose pages every kura process on
/// that folder shares.
pub type Bytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The prepared weights start with this header: [`MAGIC`], the number 1
/// in the writer's byte order (the numbers after it are in that order),
/// the token table's rows per chunk, `eps`, and the SHA-256 (hex) of the
/// package the weights came from. Every array after it starts at a
/// multiple of [`ALIGN`] bytes, in the order [`Layout::new`] takes them.
const MAGIC: &[u8; 16] = b"kura-use-m3-v1\0\0";
const HEADER: usize = 128;
const ALIGN: usize = 64;

/// Where one array lies in the prepared bytes: its first byte and its
/// number of items.
#[derive(Clone, Copy)]
struct Span {
    at: usize,
    len: usize,
}

#[derive(Clone, Copy)]
struct MatSpan {
    rows: usize,
    cols: usize,
    span: Span,
}

/// A row-major matrix.
struct Mat<'a> {
    rows: usize,
    cols: usize,
    data: &'a [f32],
}

/// Every array's place, from the token table's size alone.
struct Layout {
    scale: Span,
    lo: Span,
    /// The token table in 17 chunks (row `id` is row `id / 17` of chunk
    /// `id % 17`), one byte per number: `q * scale[chunk] + lo[chunk]`.
    table: [Span; CHUNKS],
    proj: MatSpan,
    proj_b: Span,
    ln_proj: (Span, Span),
    w1: [MatSpan; 3],
    b1: [Span; 3],
    w2: [MatSpan; 3],
    b2: [Span; 3],
    ln: (Span, Span),
    cnn: MatSpan,
    cnn_b: Span,
    d0: MatSpan,
    d1: MatSpan,
    d2: MatSpan,
    d3: MatSpan,
    p1: MatSpan,
    p3: MatSpan,
    /// The prepared bytes' length.
    len: usize,
}

/// Places arrays one after another, each at a multiple of [`ALIGN`].
struct Cursor(usize);

impl Cursor {
    fn take(&mut self, len: usize, item: usize) -> Span {
        let at = self.0;
        self.0 = (at + len * item).next_multiple_of(ALIGN);
        Span { at, len }
    }

    fn floats(&mut self, len: usize) -> Span {
        self.take(len, 4)
    }

    fn mat(&mut self, rows: usize, cols: usize) -> MatSpan {
        MatSpan {
            rows,
            cols,
            span: self.floats(rows * cols),
        }
    }
}

impl Layout {
    fn new(rows: usize) -> Layout {
        let mut c = Cursor(HEADER);
        let three = |c: &mut Cursor, f: &dyn Fn(&mut Cursor, usize) -> MatSpan| {
            ORDERS.map(|(n, _)| f(c, n))
        };
        let scale = c.floats(CHUNKS);
        let lo = c.floats(CHUNKS);
        let table = [(); CHUNKS].map(|()| c.take(rows * DIM, 1));
        let proj = c.mat(DIM, ORDERS.len() * CNN);
        let proj_b = c.floats(ORDERS.len() * CNN);
        let ln_proj = (c.floats(ORDERS.len() * CNN), c.floats(ORDERS.len() * CNN));
        let w1 = three(&mut c, &|c, n| c.mat(n * CNN, CNN));
        let b1 = [(); 3].map(|()| c.floats(CNN));
        let w2 = three(&mut c, &|c, n| c.mat(n * CNN, CNN));
        let b2 = [(); 3].map(|()| c.floats(CNN));
        let ln = (c.floats(FEATS), c.floats(FEATS));
        let cnn = c.mat(FEATS, DIM);
        let cnn_b = c.floats(DIM);
        let d0 = c.mat(DIM, 320);
        let d1 = c.mat(320, 320);
        let d2 = c.mat(320, DIM);
        let d3 = c.mat(DIM, DIM);
        let p1 = c.mat(DIM, 320);
        let p3 = c.mat(320, DIM);
        Layout {
            scale,
            lo,
            table,
            proj,
            proj_b,
            ln_proj,
            w1,
            b1,
            w2,
            b2,
            ln,
            cnn,
            cnn_b,
            d0,
            d1,
            d2,
            d3,
            p1,
            p3,
            len: c.0,
        }
    }
}

/// Bytes of its own, at the alignment of a float.
struct Owned {
    words: Vec<u64>,
    len: usize,
}

impl AsRef<[u8]> for Owned {
    fn as_ref(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
}

pub struct Encoder {
    bytes: Bytes,
    layout: Layout,
    vocab: usize,
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

/// Array `name`'s numbers, which must be `len`.
fn floats(
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

/// Array `name`'s numbers, which must be a `rows` × `cols` matrix.
fn matrix(
    arrays: &mut HashMap<String, Array>,
    name: &str,
    rows: usize,
    cols: usize,
) -> Result<Vec<f32>, ShapeError> {
    let shape = arrays.get(name).map(|a| a.shape.clone());
    if shape.as_ref().is_some_and(|s| s != &[rows, cols]) {
        return Err(ShapeError(format!(
            "`{name}` is {shape:?}, not [{rows}, {cols}]"
        )));
    }
    floats(arrays, name, rows * cols)
}

/// `c = a · b + beta · c` for one row `a`: `b`'s rows scaled by `a`'s
/// numbers and summed, `b` read once and a zero's row not at all (a matrix
/// product first copies `b` into blocks, which for one row costs more than
/// the product; after a ReLU many numbers are zeros).
fn row_times(a: &[f32], b: &Mat<'_>, c: &mut [f32], beta: f32) {
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
    b: &Mat<'_>,
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
fn row_times_fma(a: &[f32], b: &Mat<'_>, c: &mut [f32], beta: f32) {
    row_times_with(a, b, c, beta, f32::mul_add);
}

/// `c = a · b + beta · c` for row-major `a` (m × k) and `b` (k × n).
fn gemm(a: &[f32], m: usize, b: &Mat<'_>, c: &mut [f32], beta: f32) {
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

fn layer_norm(rows: &mut [f32], width: usize, (gamma, beta): (&[f32], &[f32]), eps: f32) {
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
    /// The encoder from the package's arrays, prepared in its own memory
    /// ([`Encoder::prepared`] is what to keep for a mapping); `source` is
    /// the package's SHA-256.
    pub fn new(mut arrays: HashMap<String, Array>, source: &str) -> Result<Encoder, ShapeError> {
        let a = &mut arrays;
        let rows = match a.get("q1") {
            Some(q) if q.shape.len() == 2 => q.shape[0],
            _ => return Err(ShapeError("no token table `q1` of two dimensions".into())),
        };
        let layout = Layout::new(rows);
        let mut words = vec![0u64; layout.len.div_ceil(8)];
        let out: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        let put = |out: &mut [u8], span: Span, v: &[f32]| {
            debug_assert_eq!(span.len, v.len());
            for (o, x) in out[span.at..].chunks_exact_mut(4).zip(v) {
                o.copy_from_slice(&x.to_ne_bytes());
            }
        };
        put(out, layout.scale, &floats(a, "scale", CHUNKS)?);
        put(out, layout.lo, &floats(a, "lo", CHUNKS)?);
        for (i, span) in layout.table.iter().enumerate() {
            let q = take(a, &format!("q{}", i + 1))?;
            if q.dtype != "|u1" || q.shape != [rows, DIM] {
                return Err(ShapeError(format!(
                    "`q{}` is {} {:?}, not |u1 [{rows}, {DIM}]",
                    i + 1,
                    q.dtype,
                    q.shape
                )));
            }
            out[span.at..span.at + span.len].copy_from_slice(&q.data);
        }
        // The three branches' projections side by side, one product for all.
        let parts = ["proj2", "proj3", "proj5"]
            .map(|n| matrix(a, n, DIM, CNN))
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        let rows_of = |r: usize| parts.iter().flat_map(move |p| &p[r * CNN..(r + 1) * CNN]);
        let proj: Vec<f32> = (0..DIM).flat_map(rows_of).copied().collect();
        put(out, layout.proj.span, &proj);
        let mut cat = |out: &mut [u8], span: Span, names: [&str; 3]| -> Result<(), ShapeError> {
            let mut v = Vec::with_capacity(span.len);
            for n in names {
                v.extend(floats(a, n, CNN)?);
            }
            put(out, span, &v);
            Ok(())
        };
        cat(out, layout.proj_b, ["proj_b2", "proj_b3", "proj_b5"])?;
        cat(out, layout.ln_proj.0, ["ln_g2", "ln_g3", "ln_g5"])?;
        cat(out, layout.ln_proj.1, ["ln_b2", "ln_b3", "ln_b5"])?;
        for (i, (n, _)) in ORDERS.iter().enumerate() {
            put(
                out,
                layout.w1[i].span,
                &matrix(a, &format!("w1_{n}"), n * CNN, CNN)?,
            );
            put(out, layout.b1[i], &floats(a, &format!("b1_{n}"), CNN)?);
            put(
                out,
                layout.w2[i].span,
                &matrix(a, &format!("w2_{n}"), n * CNN, CNN)?,
            );
            put(out, layout.b2[i], &floats(a, &format!("b2_{n}"), CNN)?);
        }
        put(out, layout.ln.0, &floats(a, "ln_g", FEATS)?);
        put(out, layout.ln.1, &floats(a, "ln_b", FEATS)?);
        let mats = [
            ("cnn_W", layout.cnn),
            ("d0", layout.d0),
            ("d1", layout.d1),
            ("d2", layout.d2),
            ("d3", layout.d3),
            ("p1", layout.p1),
            ("p3", layout.p3),
        ];
        for (name, m) in mats {
            put(out, m.span, &matrix(a, name, m.rows, m.cols)?);
        }
        put(out, layout.cnn_b, &floats(a, "cnn_b", DIM)?);
        let eps = floats(a, "eps", 1)?[0];
        out[..16].copy_from_slice(MAGIC);
        out[16..20].copy_from_slice(&1u32.to_ne_bytes());
        out[20..28].copy_from_slice(&(rows as u64).to_ne_bytes());
        out[28..32].copy_from_slice(&eps.to_ne_bytes());
        let digest = source.as_bytes();
        let digest = &digest[..digest.len().min(HEADER - 32)];
        out[32..32 + digest.len()].copy_from_slice(digest);
        let len = layout.len;
        Encoder::from_prepared(Arc::new(Owned { words, len }), source)
    }

    /// The encoder over prepared bytes (a mapped file, typically), if they
    /// are whole, in this machine's byte order and from package `source`.
    pub fn from_prepared(bytes: Bytes, source: &str) -> Result<Encoder, ShapeError> {
        let b = (*bytes).as_ref();
        let header = b
            .get(..HEADER)
            .ok_or_else(|| ShapeError("the prepared weights are shorter than a header".into()))?;
        let number = |at: usize, n: usize| &header[at..at + n];
        if &header[..16] != MAGIC || number(16, 4) != 1u32.to_ne_bytes() {
            return Err(ShapeError(
                "the prepared weights are of another format or byte order".into(),
            ));
        }
        let digest = &header[32..];
        let digest = &digest[..digest.iter().position(|&c| c == 0).unwrap_or(digest.len())];
        if digest != source.as_bytes() {
            return Err(ShapeError(
                "the prepared weights are of another package".into(),
            ));
        }
        let rows = u64::from_ne_bytes(number(20, 8).try_into().expect("8 bytes"));
        let rows = usize::try_from(rows)
            .ok()
            .filter(|&r| r > 0 && r <= b.len() / DIM)
            .ok_or_else(|| ShapeError(format!("the prepared weights say {rows} rows")))?;
        let layout = Layout::new(rows);
        if b.len() != layout.len {
            return Err(ShapeError(format!(
                "the prepared weights are {} bytes, not {}",
                b.len(),
                layout.len
            )));
        }
        // Every array starts at a multiple of ALIGN from the start: the
        // floats are aligned if the start is (a mapping's is a page's).
        if !(b.as_ptr() as usize).is_multiple_of(std::mem::align_of::<f32>()) {
            return Err(ShapeError("the prepared weights are not aligned".into()));
        }
        let eps = f32::from_ne_bytes(number(28, 4).try_into().expect("4 bytes"));
        Ok(Encoder {
            bytes,
            layout,
            vocab: rows * CHUNKS,
            eps,
        })
    }

    /// The bytes to keep for [`Encoder::from_prepared`].
    pub fn prepared(&self) -> &[u8] {
        (*self.bytes).as_ref()
    }

    pub fn vocab(&self) -> usize {
        self.vocab
    }

    fn floats(&self, s: Span) -> &[f32] {
        bytemuck::cast_slice(&self.prepared()[s.at..s.at + 4 * s.len])
    }

    fn mat(&self, m: MatSpan) -> Mat<'_> {
        Mat {
            rows: m.rows,
            cols: m.cols,
            data: self.floats(m.span),
        }
    }

    fn norm(&self, (gamma, beta): (Span, Span)) -> (&[f32], &[f32]) {
        (self.floats(gamma), self.floats(beta))
    }

    /// The unit-length vector of one text's token ids.
    pub fn encode(&self, ids: &[u32]) -> [f32; DIM] {
        let l = &self.layout;
        let (scale, lo) = (self.floats(l.scale), self.floats(l.lo));
        let t = ids.len().max(1);
        let mut feats = vec![0f32; t * FEATS];
        for (row, &id) in feats.chunks_exact_mut(FEATS).zip(ids) {
            let id = (id as usize).min(self.vocab - 1);
            let c = id % CHUNKS;
            let chunk = &self.prepared()[l.table[c].at..][..l.table[c].len];
            let q = &chunk[(id / CHUNKS) * DIM..][..DIM];
            for (x, &b) in row[..DIM].iter_mut().zip(q) {
                *x = f32::from(b) * scale[c] + lo[c];
            }
        }
        let mut emb = vec![0f32; t * DIM];
        for (e, row) in emb.chunks_exact_mut(DIM).zip(feats.chunks_exact(FEATS)) {
            e.copy_from_slice(&row[..DIM]);
        }
        let width = ORDERS.len() * CNN;
        let mut x = vec![0f32; t * width];
        gemm(&emb, t, &self.mat(l.proj), &mut x, 0.0);
        add_rows(&mut x, self.floats(l.proj_b));
        layer_norm(&mut x, width, self.norm(l.ln_proj), self.eps);
        for (i, &(n, left)) in ORDERS.iter().enumerate() {
            let xs: Vec<f32> = x
                .chunks_exact(width)
                .flat_map(|r| r[i * CNN..(i + 1) * CNN].iter().copied())
                .collect();
            let (w1, b1) = (self.mat(l.w1[i]), self.floats(l.b1[i]));
            let mut h = conv(&xs, t, n, left, &w1, b1);
            h.iter_mut().zip(&xs).for_each(|(a, b)| *a += b);
            let (w2, b2) = (self.mat(l.w2[i]), self.floats(l.b2[i]));
            let mut c2 = conv(&h, t, n, left, &w2, b2);
            c2.iter_mut().zip(&h).for_each(|(a, b)| *a += b);
            for (row, c) in feats.chunks_exact_mut(FEATS).zip(c2.chunks_exact(CNN)) {
                row[DIM + i * CNN..DIM + (i + 1) * CNN].copy_from_slice(c);
            }
        }
        layer_norm(&mut feats, FEATS, self.norm(l.ln), self.eps);
        let mut sum = vec![0f32; FEATS];
        for row in feats.chunks_exact(FEATS) {
            sum.iter_mut().zip(row).for_each(|(s, x)| *s += x);
        }
        let mut mean = vec![0f32; DIM];
        gemm(&sum, 1, &self.mat(l.cnn), &mut mean, 0.0);
        let scale = 1.0 / (t as f32).sqrt();
        for (m, b) in mean.iter_mut().zip(self.floats(l.cnn_b)) {
            *m = (*m + t as f32 * b) * scale;
        }
        let mut y0 = vec![0f32; 320];
        gemm(&mean, 1, &self.mat(l.d0), &mut y0, 0.0);
        relu(&mut y0);
        let mut y1 = vec![0f32; 320];
        gemm(&mean, 1, &self.mat(l.p1), &mut y1, 0.0);
        gemm(&y0, 1, &self.mat(l.d1), &mut y1, 1.0);
        relu(&mut y1);
        let mut y2 = vec![0f32; DIM];
        gemm(&y1, 1, &self.mat(l.d2), &mut y2, 0.0);
        relu(&mut y2);
        let mut z = [0f32; DIM];
        gemm(&y1, 1, &self.mat(l.p3), &mut z, 0.0);
        gemm(&y2, 1, &self.mat(l.d3), &mut z, 1.0);
        z.iter_mut().for_each(|v| *v = v.tanh());
        let norm = z.iter().map(|v| v * v).sum::<f32>().max(self.eps).sqrt();
        z.iter_mut().for_each(|v| *v /= norm);
        z
    }
}

/// One convolution over the tokens' `CNN`-wide rows: each token sees `n`
/// tokens from `left` before it (zeros past either end), then ReLU.
fn conv(rows: &[f32], t: usize, n: usize, left: usize, w: &Mat<'_>, b: &[f32]) -> Vec<f32> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(len: usize, seed: usize) -> Vec<f32> {
        (0..len)
            .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 - 1001.0) / 997.0)
            .collect()
    }

    #[test]
    fn one_row_times_a_matrix_is_the_matrix_product() {
        let data = numbers(37 * 29, 1);
        let b = Mat {
            rows: 37,
            cols: 29,
            data: &data,
        };
        let mut a = numbers(37, 2);
        a[3] = 0.0;
        a[10] = 0.0;
        for beta in [0.0, 1.0, 0.5] {
            let start = numbers(29, 3);
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

    /// The package's arrays, of the right shapes, with made-up numbers.
    fn arrays(rows: usize) -> HashMap<String, Array> {
        let mut a = HashMap::new();
        let mut seed = 0;
        let mut put = |name: &str, shape: &[usize]| {
            seed += 1;
            let data = numbers(shape.iter().product(), seed)
                .iter()
                .map(|x| x / 8.0)
                .flat_map(|x| x.to_le_bytes())
                .collect();
            let dtype = "<f4".to_owned();
            let shape = shape.to_vec();
            a.insert(name.to_owned(), Array { shape, dtype, data });
        };
        put("scale", &[CHUNKS]);
        put("lo", &[CHUNKS]);
        for n in [2, 3, 5] {
            put(&format!("proj{n}"), &[DIM, CNN]);
            for p in ["proj_b", "ln_g", "ln_b"] {
                put(&format!("{p}{n}"), &[CNN]);
            }
            put(&format!("w1_{n}"), &[n * CNN, CNN]);
            put(&format!("w2_{n}"), &[n * CNN, CNN]);
            put(&format!("b1_{n}"), &[CNN]);
            put(&format!("b2_{n}"), &[CNN]);
        }
        put("ln_g", &[FEATS]);
        put("ln_b", &[FEATS]);
        put("cnn_W", &[FEATS, DIM]);
        put("cnn_b", &[DIM]);
        put("d0", &[DIM, 320]);
        put("d1", &[320, 320]);
        put("d2", &[320, DIM]);
        put("d3", &[DIM, DIM]);
        put("p1", &[DIM, 320]);
        put("p3", &[320, DIM]);
        put("eps", &[1]);
        for i in 1..=CHUNKS {
            let data = (0..rows * DIM).map(|j| (j * 31 + i * 7) as u8).collect();
            let (shape, dtype) = (vec![rows, DIM], "|u1".to_owned());
            a.insert(format!("q{i}"), Array { shape, dtype, data });
        }
        a
    }

    /// Bytes at an address of our choosing: `shift` bytes past an
    /// aligned one.
    struct Shifted(Vec<u64>, usize, usize);

    impl AsRef<[u8]> for Shifted {
        fn as_ref(&self) -> &[u8] {
            &bytemuck::cast_slice(&self.0)[self.1..self.1 + self.2]
        }
    }

    fn copy(bytes: &[u8], shift: usize) -> Bytes {
        let mut words = vec![0u64; (bytes.len() + shift).div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[shift..shift + bytes.len()]
            .copy_from_slice(bytes);
        Arc::new(Shifted(words, shift, bytes.len()))
    }

    #[test]
    fn prepared_weights_read_back_embed_exactly_alike() {
        let own = Encoder::new(arrays(3), "abc123").unwrap();
        assert_eq!(own.vocab(), 3 * CHUNKS);
        let back = Encoder::from_prepared(copy(own.prepared(), 0), "abc123").unwrap();
        for ids in [&[1u32, 7, 50][..], &[], &[4; 40]] {
            assert_eq!(own.encode(ids), back.encode(ids));
        }
        let v = own.encode(&[1, 2, 3]);
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4 && v.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn prepared_weights_of_another_package_or_cut_short_or_misaligned_are_refused() {
        let own = Encoder::new(arrays(2), "abc123").unwrap();
        let bytes = own.prepared();
        let refused = |b: Bytes, source: &str| Encoder::from_prepared(b, source).err().unwrap();
        assert!(
            refused(copy(bytes, 0), "abc124")
                .to_string()
                .contains("another package")
        );
        let short = &bytes[..bytes.len() - 1];
        assert!(
            refused(copy(short, 0), "abc123")
                .to_string()
                .contains("bytes, not")
        );
        assert!(
            refused(copy(&bytes[..40], 0), "abc123")
                .to_string()
                .contains("header")
        );
        assert!(
            refused(copy(bytes, 1), "abc123")
                .to_string()
                .contains("aligned")
        );
        let mut other = bytes.to_vec();
        other[0] ^= 1;
        assert!(
            refused(copy(&other, 0), "abc123")
                .to_string()
                .contains("format")
        );
        let mut rows = bytes.to_vec();
        rows[20..28].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert!(
            refused(copy(&rows, 0), "abc123")
                .to_string()
                .contains("rows")
        );
    }
}
