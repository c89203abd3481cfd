//! NumPy's `.npz` (a zip of `.npy` arrays), for the arrays a model ships
//! as: little-endian `float32`, `float64`, `uint8` and `int8`, C order.

use std::collections::HashMap;
use std::io::{Read, Seek};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum NpzError {
    #[error("the weights file is not a readable .npz: {0}")]
    Zip(#[from] zip::result::ZipError),
    #[error("reading the weights: {0}")]
    Io(#[from] std::io::Error),
    #[error("array `{name}`: {why}")]
    Array { name: String, why: String },
}

/// One array: its shape and its data as bytes (little-endian).
pub struct Array {
    pub shape: Vec<usize>,
    pub dtype: String,
    pub data: Vec<u8>,
}

impl Array {
    pub fn f32s(&self) -> Option<Vec<f32>> {
        match self.dtype.as_str() {
            "<f4" => Some(
                self.data
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            "<f8" => Some(
                self.data
                    .chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32)
                    .collect(),
            ),
            _ => None,
        }
    }
}

/// Every array of the archive, by name (without `.npy`).
pub fn read<R: Read + Seek>(r: R) -> Result<HashMap<String, Array>, NpzError> {
    let mut zip = zip::ZipArchive::new(r)?;
    let mut out = HashMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i)?;
        let name = f.name()?.into_owned();
        let Some(name) = name.strip_suffix(".npy").map(str::to_owned) else {
            continue;
        };
        let mut bytes = Vec::with_capacity(f.size() as usize);
        f.read_to_end(&mut bytes)?;
        let array = npy(&bytes).map_err(|why| NpzError::Array {
            name: name.clone(),
            why,
        })?;
        out.insert(name, array);
    }
    Ok(out)
}

/// One `.npy`: the magic, the version, the header (a Python dict literal)
/// and the data.
fn npy(bytes: &[u8]) -> Result<Array, String> {
    if bytes.get(..6) != Some(b"\x93NUMPY") {
        return Err("not an .npy array".into());
    }
    let (header_len, at) = match bytes.get(6) {
        Some(1) => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        Some(2 | 3) => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => return Err("unknown .npy version".into()),
    };
    let header = bytes
        .get(at..at + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated header")?;
    let value = |key: &str| -> Option<&str> {
        let from = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[from..].trim_start())
    };
    let dtype = value("descr")
        .and_then(|v| v.strip_prefix('\''))
        .and_then(|v| v.split('\'').next())
        .ok_or("no dtype")?
        .to_owned();
    if value("fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran order is not supported".into());
    }
    let shape_text = value("shape")
        .and_then(|v| v.strip_prefix('('))
        .and_then(|v| v.split(')').next())
        .ok_or("no shape")?;
    let shape: Vec<usize> = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("bad shape `{shape_text}`")))
        .collect::<Result<_, _>>()?;
    let item = match dtype.as_str() {
        "<f4" => 4,
        "<f8" => 8,
        "|u1" | "|i1" => 1,
        other => return Err(format!("unsupported dtype {other}")),
    };
    let data = bytes[at + header_len..].to_vec();
    let want = shape.iter().product::<usize>() * item;
    if data.len() != want {
        return Err(format!("{} bytes of data, expected {want}", data.len()));
    }
    Ok(Array { shape, dtype, data })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn npy(header: &str, data: &[u8]) -> Vec<u8> {
        let mut h = header.to_owned();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(h.len() as u16).to_le_bytes());
        out.extend_from_slice(h.as_bytes());
        out.extend_from_slice(data);
        out
    }

    fn npz(files: &[(&str, Vec<u8>)]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, bytes) in files {
            zip.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(bytes).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    #[test]
    fn arrays_are_read_with_their_shape_and_type() {
        let floats: Vec<u8> = [1.5f32, -2.0, 0.25, 4.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let file = npz(&[
            (
                "w.npy",
                npy(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                    &floats,
                ),
            ),
            (
                "eps.npy",
                npy(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                    &1e-6f64.to_le_bytes(),
                ),
            ),
        ]);
        let arrays = read(std::io::Cursor::new(file)).unwrap();
        assert_eq!(arrays["w"].shape, [2, 2]);
        assert_eq!(arrays["w"].f32s().unwrap(), [1.5, -2.0, 0.25, 4.0]);
        assert_eq!(arrays["eps"].f32s().unwrap(), [1e-6f32]);
    }

    #[test]
    fn a_short_or_strange_array_is_refused() {
        let short = npz(&[(
            "w.npy",
            npy(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                &[0; 8],
            ),
        )]);
        assert!(read(std::io::Cursor::new(short)).is_err());
        let fortran = npz(&[(
            "w.npy",
            npy(
                "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                &[0; 4],
            ),
        )]);
        assert!(read(std::io::Cursor::new(fortran)).is_err());
        assert!(read(std::io::Cursor::new(b"no zip".to_vec())).is_err());
    }
}
