//! The sentence encoder's readers: any bytes as a SentencePiece model or
//! as an .npz are an error or a value, never a panic; a model that parses
//! segments any text into ids within its vocabulary, framed by `<s>` and
//! `</s>`.

use kura::embed::{npz, sentencepiece};

pub fn run(data: &[u8]) {
    let _ = npz::read(std::io::Cursor::new(data));
    let (model, text) = data.split_at(data.len() / 2);
    if let Ok(sp) = sentencepiece::SentencePiece::parse(model) {
        let text = String::from_utf8_lossy(text);
        let ids = sp.encode(&text);
        assert_eq!(ids.first(), Some(&sentencepiece::BOS));
        assert_eq!(ids.last(), Some(&sentencepiece::EOS));
        assert!(ids.iter().all(|&i| (i as usize) < sp.vocab_size().max(3)));
    }
}
