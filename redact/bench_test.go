package redact

import (
	"os"
	"testing"
)

// BenchmarkFind scans the planted-secret corpus's Go file (all rules).
func BenchmarkFind(b *testing.B) {
	d := testDetector(b)
	data, err := os.ReadFile("testdata/corpus/app/cloud.go")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		d.Find(text)
	}
}

// BenchmarkFindOrdinaryCode scans an example source file without secrets.
func BenchmarkFindOrdinaryCode(b *testing.B) {
	d := testDetector(b)
	data, err := os.ReadFile("../examples/sample-repo/pycalc/calc.py")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		d.Find(text)
	}
}
