//! `precedent keys`: create, list and revoke the API keys of a library.

use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use precedent_engine::keys::{keys_table, KeyStore, Role};

#[derive(Subcommand)]
pub enum KeysAction {
    /// Create a key and print it once (only its hash is stored).
    Create {
        /// Library directory built by `precedent index`.
        #[arg(long)]
        index: PathBuf,
        /// read (search, clauses, compare, review), rate (read + ratings) or admin (all,
        /// including the ratings export).
        #[arg(long)]
        role: Role,
        /// Who the key is for.
        #[arg(long, default_value = "")]
        label: String,
        /// Print JSON (id, role, label, key) instead of the bare key.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a key by its id (see `list`); a running server stops accepting it at once.
    Revoke {
        #[arg(long)]
        index: PathBuf,
        id: String,
    },
    /// List the library's keys (ids, roles, labels; never the keys themselves).
    List {
        #[arg(long)]
        index: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

pub fn run(action: KeysAction) -> Result<()> {
    match action {
        KeysAction::Create {
            index,
            role,
            label,
            json,
        } => {
            let (record, token) = KeyStore::of_library(&index)?.create(role, &label)?;
            if json {
                let out = serde_json::json!({
                    "id": record.id, "role": record.role, "label": record.label, "key": token,
                });
                println!("{out}");
            } else {
                eprintln!(
                    "created key {} (role {}) for {}; it is shown only now:",
                    record.id,
                    record.role,
                    index.display()
                );
                println!("{token}");
            }
        }
        KeysAction::Revoke { index, id } => {
            let record = KeyStore::of_library(&index)?.revoke(&id)?;
            eprintln!("revoked key {} (role {})", record.id, record.role);
        }
        KeysAction::List { index, json } => {
            let keys = KeyStore::of_library(&index)?.list()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&keys)?);
            } else {
                print!("{}", keys_table(&keys, &index));
            }
        }
    }
    Ok(())
}
