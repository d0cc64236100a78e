#!/bin/sh
# pdf2md.sh — print the text of a PDF invoice, keeping its column layout,
# ready to be copied into invoice-template.md. Needs poppler-utils (pdftotext).
# Usage: pdf2md.sh invoice.pdf
set -eu
if [ "$#" -ne 1 ]; then
	echo "usage: $0 invoice.pdf" >&2
	exit 2
fi
text=$(pdftotext -layout -enc UTF-8 "$1" -)
if [ -z "$(printf '%s' "$text" | tr -d '[:space:]')" ]; then
	echo "$1: no text layer (a scan?); run ocrmypdf first" >&2
	exit 1
fi
printf '%s\n' "$text"
