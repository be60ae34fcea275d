package bounds

import (
	"math"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		f    Field
		want string
	}{
		{Int("params.min_chars", -5, 0, 100000), "params.min_chars is -5, want 0 to 100000"},
		{Int("n", 1_000_000, 1, 1_000_000), ""},
		{Float("min-score", math.NaN(), 0, 5), "min-score is NaN, want 0 to 5"},
		{Float("min-score", math.Inf(1), 0, 5), "min-score is +Inf, want 0 to 5"},
		{Float("verbatim_share", 7.0, 0, 1), "verbatim_share is 7, want 0 to 1"},
		{Float("share", 0.5, 0, 1), ""},
		{Duration("timeout", 0, time.Millisecond, 24*time.Hour), "timeout is 0s, want 1ms to 24h0m0s"},
		{Int("seed", uint64(1)<<60, 0, 1<<53), "seed is 1152921504606846976, want 0 to 9007199254740992"},
		{Int("seed", int64(1)<<53+1, 0, 1<<53), "seed is 9007199254740993, want 0 to 9007199254740992"},
		{Int("seed", int64(1)<<53, 0, 1<<53), ""},
	} {
		err := Check(c.f)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s = %v: got %q, want %q", c.f.Name, c.f.Value, got, c.want)
		}
	}
}
