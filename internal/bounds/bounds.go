// Package bounds checks numbers against their allowed ranges, for config
// fields and flags alike, in one wording: "params.min_chars is -5, want 0
// to 100000". NaN and infinities lie in no range.
package bounds

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"time"
)

// Range is a closed interval of numbers. Durations are held in
// nanoseconds and printed as durations.
type Range struct {
	Min, Max float64
	duration bool
}

// Ints is the range lo to hi of a count.
func Ints(lo, hi int64) Range { return Range{Min: float64(lo), Max: float64(hi)} }

// Floats is the range lo to hi of a real number.
func Floats(lo, hi float64) Range { return Range{Min: lo, Max: hi} }

// Durations is the range lo to hi of a duration.
func Durations(lo, hi time.Duration) Range {
	return Range{Min: float64(lo), Max: float64(hi), duration: true}
}

// Contains reports whether v lies in r; NaN and infinities never do.
func (r Range) Contains(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= r.Min && v <= r.Max
}

// String is "lo to hi".
func (r Range) String() string { return r.format(r.Min) + " to " + r.format(r.Max) }

func (r Range) format(v float64) string {
	if r.duration && !math.IsNaN(v) && !math.IsInf(v, 0) {
		return time.Duration(v).String()
	}
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64) // every digit of a large count
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// Check is nil when v lies in r, else the error "name is v, want r".
func (r Range) Check(name string, v float64) error {
	if r.Contains(v) {
		return nil
	}
	return fmt.Errorf("%s is %s, want %s", name, r.format(v), r)
}

// CheckInt is Check for an integer, exact beyond 2^53 (where float64
// rounds: 2^53+1 would pass a check against 2^53).
func (r Range) CheckInt(name string, v *big.Int) error {
	lo, _ := big.NewFloat(r.Min).Int(nil)
	hi, _ := big.NewFloat(r.Max).Int(nil)
	if v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0 {
		return nil
	}
	return fmt.Errorf("%s is %s, want %s", name, v, r)
}

// Field is one named number and its range.
type Field struct {
	Name  string
	Value float64
	Range Range
	exact *big.Int // an integer's exact value
}

// Int is a count field.
func Int[T ~int | ~int64 | ~uint64](name string, v T, lo, hi int64) Field {
	exact := new(big.Int)
	if rv := reflect.ValueOf(v); rv.CanInt() {
		exact.SetInt64(rv.Int())
	} else {
		exact.SetUint64(rv.Uint())
	}
	return Field{Name: name, Value: float64(v), Range: Ints(lo, hi), exact: exact}
}

// Float is a real-number field.
func Float[T ~float32 | ~float64](name string, v T, lo, hi float64) Field {
	return Field{Name: name, Value: float64(v), Range: Floats(lo, hi)}
}

// Duration is a duration field.
func Duration(name string, v, lo, hi time.Duration) Field {
	return Field{Name: name, Value: float64(v), Range: Durations(lo, hi)}
}

// Check checks every field and joins the errors of those out of range.
func Check(fields ...Field) error {
	var errs []error
	for _, f := range fields {
		if f.exact != nil {
			errs = append(errs, f.Range.CheckInt(f.Name, f.exact))
		} else {
			errs = append(errs, f.Range.Check(f.Name, f.Value))
		}
	}
	return errors.Join(errs...)
}
