package redact

import (
	"bytes"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// Encodings a file can be found in (FileRedactions.Encoding); a UTF-16 or
// UTF-32 file that starts with a byte order mark has "-bom" appended, and
// is written back with it.
const (
	EncUTF8    = "utf-8"    // UTF-8, or any ASCII-compatible 8-bit text
	EncUTF16LE = "utf-16le" //
	EncUTF16BE = "utf-16be" //
	EncUTF32LE = "utf-32le" //
	EncUTF32BE = "utf-32be" //
	EncBinary  = "binary"   // not text: scanned as bytes, secrets masked in place
	bomSuffix  = "-bom"
)

const (
	sniffSize  = 64 << 10 // bytes looked at to tell text from binary
	maxBadText = 0.10     // share of NUL, control and invalid bytes text may hold
	maxZeroLow = 0.05     // share of NULs in the low lane of BOM-less UTF-16/32
	minZeroHi  = 0.90     // share of NULs in its other lanes
)

// decoded is a file's content as text, and how to write text back.
type decoded struct {
	// Text is what the detector scans: the decoded text of a UTF-16/32
	// file, else the file's bytes as they are (invalid UTF-8 and NULs
	// included: they are kept byte for byte around the secrets).
	Text string
	// Encoding names the encoding (EncUTF8, EncUTF16LE-bom, …, EncBinary).
	Encoding string
	enc      encoding.Encoding // nil for UTF-8 and binary
	bom      []byte
}

// encode returns text written back in d's encoding.
func (d decoded) encode(text string) ([]byte, error) {
	if d.enc == nil {
		return []byte(text), nil
	}
	b, err := d.enc.NewEncoder().Bytes([]byte(text))
	if err != nil {
		return nil, err
	}
	return append(append([]byte(nil), d.bom...), b...), nil
}

var boms = []struct {
	bom  []byte
	name string
	enc  encoding.Encoding
}{
	// UTF-32 first: its little-endian BOM starts with UTF-16's.
	{[]byte{0xFF, 0xFE, 0, 0}, EncUTF32LE, utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)},
	{[]byte{0, 0, 0xFE, 0xFF}, EncUTF32BE, utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)},
	{[]byte{0xFF, 0xFE}, EncUTF16LE, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)},
	{[]byte{0xFE, 0xFF}, EncUTF16BE, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)},
}

// decodeFile tells how data is encoded and decodes it: UTF-16 and UTF-32
// with a byte order mark, UTF-16 and UTF-32 without one when their NUL
// bytes fall in the lanes of ASCII-range text, else 8-bit text (UTF-8 or
// an ASCII-compatible code page, stray NUL bytes allowed) when at most
// 10% of its first 64 KiB are NUL, control or invalid UTF-8 bytes, else
// binary.
func decodeFile(data []byte) decoded {
	for _, b := range boms {
		if bytes.HasPrefix(data, b.bom) {
			if text, ok := decodeWith(b.enc, data[len(b.bom):]); ok {
				return decoded{Text: text, Encoding: b.name + bomSuffix, enc: b.enc, bom: b.bom}
			}
		}
	}
	if name, enc := sniffWide(data); enc != nil {
		if text, ok := decodeWith(enc, data); ok {
			return decoded{Text: text, Encoding: name, enc: enc}
		}
	}
	if isText(data[:min(len(data), sniffSize)]) {
		return decoded{Text: string(data), Encoding: EncUTF8}
	}
	return decoded{Text: string(data), Encoding: EncBinary}
}

// decodeWith decodes data, refusing text that does not read as text.
func decodeWith(enc encoding.Encoding, data []byte) (string, bool) {
	b, err := enc.NewDecoder().Bytes(data)
	if err != nil || !isText(b[:min(len(b), sniffSize)]) {
		return "", false
	}
	return string(b), true
}

// sniffWide recognises BOM-less UTF-32 and UTF-16 by where the NUL bytes
// of mostly-ASCII text fall: every byte of a lane but the low one is NUL.
func sniffWide(data []byte) (string, encoding.Encoding) {
	data = data[:min(len(data), sniffSize)]
	if len(data) < 8 {
		return "", nil
	}
	lanes := func(n int) []float64 {
		zeros := make([]int, n)
		units := len(data) / n
		for i := 0; i < units*n; i++ {
			if data[i] == 0 {
				zeros[i%n]++
			}
		}
		share := make([]float64, n)
		for i, z := range zeros {
			share[i] = float64(z) / float64(units)
		}
		return share
	}
	if len(data)%4 == 0 {
		z := lanes(4)
		switch {
		case z[0] <= maxZeroLow && z[1] >= minZeroHi && z[2] >= minZeroHi && z[3] >= minZeroHi:
			return EncUTF32LE, utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)
		case z[3] <= maxZeroLow && z[0] >= minZeroHi && z[1] >= minZeroHi && z[2] >= minZeroHi:
			return EncUTF32BE, utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)
		}
	}
	if len(data)%2 == 0 {
		z := lanes(2)
		switch {
		case z[0] <= maxZeroLow && z[1] >= minZeroHi:
			return EncUTF16LE, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
		case z[1] <= maxZeroLow && z[0] >= minZeroHi:
			return EncUTF16BE, unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
		}
	}
	return "", nil
}

// isText says whether at most maxBadText of b are NUL bytes, control
// characters other than tab, newline, carriage return, form feed, vertical
// tab and escape, or bytes of invalid UTF-8 (an 8-bit code page such as
// Latin-1 has a few: it still reads as text).
func isText(b []byte) bool {
	bad := 0
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			bad++
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != '\v' && r != 0x1b, r == 0x7f:
			bad++
		}
		i += max(n, 1)
	}
	return float64(bad) <= maxBadText*float64(len(b))
}

// DecodeText returns the text of a file's content as the sanitiser reads
// it: UTF-16 and UTF-32 decoded, anything else as it is.
func DecodeText(data []byte) string { return decodeFile(data).Text }

// IsBinary says whether the sanitiser takes data for binary (not text in
// any encoding it reads).
func IsBinary(data []byte) bool { return decodeFile(data).Encoding == EncBinary }
