package driver

import (
	"strings"
	"testing"
)

// TestRecycleReason: a window is due by its dialogue count or its heap,
// each bound off at 0, and the reason says which bound it passed.
func TestRecycleReason(t *testing.T) {
	cases := []struct {
		cfg  Recycle
		use  windowUse
		want string
	}{
		{Recycle{}, windowUse{dialogues: 1000, heapMiB: 5000}, ""},
		{Recycle{After: 3}, windowUse{dialogues: 2}, ""},
		{Recycle{After: 3}, windowUse{dialogues: 3}, "drove 3 dialogues (recycle after 3)"},
		{Recycle{HeapMiB: 512}, windowUse{dialogues: 9, heapMiB: 512}, ""},
		{Recycle{HeapMiB: 512}, windowUse{dialogues: 9, heapMiB: 700}, "heap is 700 MiB (recycle above 512 MiB)"},
		{DefaultRecycle(), windowUse{dialogues: 100000, heapMiB: 90}, ""},
	}
	for _, c := range cases {
		got := c.use.reason(c.cfg)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%+v with %+v: reason %q, want %q", c.use, c.cfg, got, c.want)
		}
	}
	if err := (Recycle{After: -1}).Validate(); err == nil {
		t.Error("a negative count was accepted")
	}
	if err := DefaultRecycle().Validate(); err != nil {
		t.Errorf("default: %v", err)
	}
}
