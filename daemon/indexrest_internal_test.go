package daemon

import (
	"testing"
	"time"
)

// After a run the indexer rests as long as the run took (at least
// minIndexRest, at most maxIndexRest) before the next, and not at all
// once that long passed.
func TestRestWait(t *testing.T) {
	end := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		now  time.Time
		took time.Duration
		want time.Duration
	}{
		{end, 200 * time.Millisecond, 200 * time.Millisecond},
		{end.Add(50 * time.Millisecond), 200 * time.Millisecond, 150 * time.Millisecond},
		{end.Add(time.Second), 200 * time.Millisecond, -800 * time.Millisecond},
		{end, time.Minute, maxIndexRest},
		{end, 0, minIndexRest},
		{end.Add(minIndexRest), time.Millisecond, 0},
	}
	for _, tt := range tests {
		if got := restWait(tt.now, end, tt.took); got != tt.want {
			t.Errorf("at %v after a run of %v: rest %v, want %v", tt.now.Sub(end), tt.took, got, tt.want)
		}
	}
}
