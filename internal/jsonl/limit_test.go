package jsonl

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEachLineOverTheLimit: a line over the limit is an error naming the
// file, the line and the limit (the limit is small here: MaxLine bytes
// take long to read under -race); as the torn last line of a log it is
// skipped.
func TestEachLineOverTheLimit(t *testing.T) {
	in := "{\"a\":1}\n{\"a\":\"" + strings.Repeat("x", 1000) + "\"}\n{\"a\":3}\n"
	var lines []int
	_, err := eachMax(strings.NewReader(in), "big.jsonl", false, 100, func(n int, _ []byte) error { lines = append(lines, n); return nil })
	var le *Error
	if !errors.As(err, &le) || le.File != "big.jsonl" || le.Line != 2 || !errors.Is(err, ErrTooLong) ||
		err.Error() != "big.jsonl:2: line too long: 1008 bytes, over the 100 bytes a line may have" {
		t.Errorf("err = %v, want big.jsonl:2 over the limit", err)
	}
	if !cmp.Equal(lines, []int{1}) {
		t.Errorf("lines read %v, want [1]", lines)
	}
	if r := NewReader(nil); r.TooLong(Line{Size: MaxLine + 1}).Error() != "line too long: 67108865 bytes, over the 64 MiB a line may have" {
		t.Errorf("the limit reads %q", r.TooLong(Line{Size: MaxLine + 1}))
	}

	torn, err := eachMax(strings.NewReader("{\"a\":1}\n{\"a\":\""+strings.Repeat("x", 1000)), "log.jsonl", true, 100,
		func(int, []byte) error { return nil })
	if err != nil || !torn {
		t.Errorf("a log's long torn last line: torn %v err %v", torn, err)
	}
}
