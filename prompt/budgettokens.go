package prompt

import (
	"fmt"
)

// size is what in takes from a total budget in unit.
func (in injected) size(unit BudgetUnit) int {
	if unit == UnitTokens {
		return in.tokens
	}
	return in.chars
}

// maxTokenFits bounds the truncations fitTokens tries: each one is cut
// to the share of the chars its count says fits, so two or three do.
const maxTokenFits = 8

// budgetFileTokens is budgetFile for a budget in tokens (b.Unit): the
// same pipeline (behavior.md §3) with every limit in tokens, counted
// exactly on what is injected, marker included. The marker and notes
// still say exactly how many chars were kept.
func (w *Workspace) budgetFileTokens(rep *Report, fr *FileReport, r resolved, cfg *Config, b *Budget, remaining int, used []string) (in injected, ok bool) {
	fr.RemainingBeforeChars, fr.RemainingBeforeTokens = 0, remaining
	t, ok := w.admitFile(rep, fr, r, cfg, b, remaining, used)
	if !ok {
		return in, false
	}
	limit := b.PerFileTokens
	in, tr := w.fitTokens(r.file, r.name, fr.OriginalTokens, limit, b)
	fr.Status = StatusFull
	if tr.Truncated {
		fr.Status = StatusTruncated
	}
	if in.tokens > remaining {
		limit = remaining
		in, tr = w.fitTokens(r.file, r.name, fr.OriginalTokens, limit, b)
		fr.Status, fr.UsedBy = StatusClamped, append([]string(nil), used...)
	}
	fr.LimitTokens, fr.LimitChars = limit, in.limit
	switch {
	case tr.Dropped:
		fr.Status = StatusDropped
		fr.Dropped = []Range{fullRange(t)}
		fr.Note = fmt.Sprintf("dropped: the %s tokens left of the total budget cannot hold a truncation marker", GroupThousands(remaining))
		return injected{}, false
	}
	fr.Note = tokenNote(fr.Status, limit, b.TotalTokens, tr, t.chars, in.tokens, fr.OriginalTokens)
	if tr.Truncated {
		fr.HeadChars, fr.TailChars = tr.HeadChars, tr.TailChars
		start := t.position(tr.HeadEnd)
		fr.Dropped = []Range{{Start: start, End: t.positionAfter(start, tr.TailStart)}}
	}
	fr.InjectedChars = tr.ResultChars
	return in, true
}

// tokenNote is the note of a file truncated or clamped to limit tokens
// ("" for another status): the chars kept and the tokens injected.
func tokenNote(status Status, limit, total int, tr Truncation, chars, tokens, orig int) string {
	kept := fmt.Sprintf("kept %s + %s of %s chars (%s of %s tokens)", GroupThousands(tr.HeadChars), GroupThousands(tr.TailChars),
		GroupThousands(chars), GroupThousands(tokens), GroupThousands(orig))
	switch status {
	case StatusTruncated:
		return fmt.Sprintf("truncated to the per-file budget of %s tokens: %s", GroupThousands(limit), kept)
	case StatusClamped:
		return fmt.Sprintf("clamped to the %s tokens left of the total budget of %s tokens: %s", GroupThousands(limit), GroupThousands(total), kept)
	}
	return ""
}

// exactTokens counts f's tokens exactly, even in a workspace that
// estimates them for its reports: a budget in tokens is enforced on
// exact counts.
func (w *Workspace) exactTokens(f *File) int {
	switch {
	case f.key == 0:
		return w.cache.Count(f.text.content())
	case f.text.sampled: // head and tail only: no excerpt is counted from it
		return w.cache.countKeyed(f.key, f.text.content())
	}
	return w.cache.countFile(f.key, f.text.content())
}

// excerptTokens counts the tokens of e, which truncation to limit chars
// made of f (called name): only around the marker when f's own count
// was taken recently (see Tokenizer.countExcerpt).
func (w *Workspace) excerptTokens(f *File, name string, limit int, b *Budget, e excerpt) int {
	if f.key == 0 { // no fingerprint (EstimateTokens): key the count by its text
		return w.cache.Count(e.String())
	}
	key := w.excerptKey(f, name, limit, b)
	if n, ok := w.cache.cachedCount(key); ok {
		return n
	}
	if f.text.sampled { // only head and tail were read: no count of the whole
		return w.cache.countKeyed(key, e.String())
	}
	return w.cache.countExcerpt(key, f.key, f.text.content(), e)
}

// fitTokens cuts f (of orig tokens) by the head and tail rule until what
// is injected, marker included, is at most limit tokens: it starts from
// the chars the file's own chars-per-token ratio gives and shrinks by the
// share the count says is over. A text that fits is kept whole.
func (w *Workspace) fitTokens(f *File, name string, orig, limit int, b *Budget) (injected, Truncation) {
	t := f.text
	if orig <= limit && !t.sampled {
		body, tr := truncateText(t, name, t.chars, b.HeadRatio, b.TailRatio)
		return injected{body: body, chars: tr.ResultChars, limit: t.chars, tokens: orig}, tr
	}
	chars := int(float64(limit) * float64(t.chars) / float64(max(orig, 1)))
	if t.sampled { // only head and tail were read: cut within them
		hc, _ := countChars(t.head)
		chars = min(chars, hc, t.tailChars)
	}
	var tr Truncation
	for range maxTokenFits {
		chars = min(chars, t.chars-1)
		var body excerpt
		body, tr = truncateText(t, name, chars, b.HeadRatio, b.TailRatio)
		if tr.Dropped {
			return injected{}, tr
		}
		n := w.excerptTokens(f, name, chars, b, body)
		if n <= limit {
			return injected{body: body, chars: tr.ResultChars, limit: chars, tokens: n}, tr
		}
		next := int(float64(chars)*float64(limit)/float64(n)) - 1
		chars = min(next, chars-1)
	}
	tr.Dropped = true
	return injected{}, tr
}
