package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"math"
	"os"
	"time"
)

// defineLogFormat registers --log-format on fs: "" (the default) picks
// text on a terminal and JSON otherwise.
func defineLogFormat(fs *flag.FlagSet, p *string) {
	fs.StringVar(p, "log-format", "", "log `format`: text or json (default: text when stderr is a terminal, JSON otherwise)")
}

// newLogger logs at level in format: text, json, or "" for text on a
// terminal and JSON otherwise. Durations read as durations in both
// ("1.25s", not nanoseconds), and a context cancellation (a stop, a
// client gone) is never logged as a warning or an error.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", level)
	}
	if format == "" {
		format = "json"
		if isTerminal(w) {
			format = "text"
		}
	}
	opts := &slog.HandlerOptions{Level: lv, ReplaceAttr: readableDuration}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, usagef("--log-format %q: use text or json", format)
	}
	return slog.New(calmHandler{h}), nil
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readableDuration writes a duration attribute as Go writes durations,
// to three significant digits ("1.25s", "840µs"), for JSON too, whose
// handler would write nanoseconds.
func readableDuration(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(roundDuration(a.Value.Duration()).String())
	}
	return a
}

// roundDuration rounds d to three significant digits.
func roundDuration(d time.Duration) time.Duration {
	abs := d.Abs()
	if abs < 1000 {
		return d
	}
	step := time.Duration(math.Pow10(int(math.Floor(math.Log10(float64(abs)))) - 2))
	return d.Round(step)
}

// calmHandler logs a warning or an error whose error attribute is a
// context cancellation at DEBUG: that is how a stop looks from inside
// (the MCP SDK logs "server run cancelled" at ERROR when a signal ends
// the session), not a failure.
type calmHandler struct{ slog.Handler }

func (h calmHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && cancelled(r) {
		r.Level = slog.LevelDebug
		if !h.Handler.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h calmHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return calmHandler{h.Handler.WithAttrs(attrs)}
}

func (h calmHandler) WithGroup(name string) slog.Handler {
	return calmHandler{h.Handler.WithGroup(name)}
}

// cancelled reports whether one of r's attributes is an error that is a
// context cancellation.
func cancelled(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Resolve().Any().(error); ok && errors.Is(err, context.Canceled) {
			found = true
		}
		return !found
	})
	return found
}
