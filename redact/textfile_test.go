package redact

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func utf16Bytes(s string, bigEndian, bom bool) []byte {
	var b []byte
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	for _, u := range units {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return b
}

func utf32Bytes(s string, bigEndian, bom bool) []byte {
	var b []byte
	rs := []rune(s)
	if bom {
		rs = append([]rune{0xFEFF}, rs...)
	}
	for _, r := range rs {
		u := uint32(r)
		if bigEndian {
			b = append(b, byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
		}
	}
	return b
}

// TestDecodeFile: every encoding the sanitiser reads is told apart and
// decoded; binary stays binary.
func TestDecodeFile(t *testing.T) {
	text := "[default]\naws_access_key_id = AKIA" + "QYLPMN5HHHFPZAM2\nregion = eu-west-1\n"
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 3, 0xff, 0x80, 7}, 50)...)
	cases := []struct {
		name, enc string
		data      []byte
	}{
		{"utf-8", EncUTF8, []byte(text)},
		{"utf-8 with a BOM", EncUTF8, append([]byte("\xef\xbb\xbf"), text...)},
		{"utf-16le with a BOM", "utf-16le-bom", utf16Bytes(text, false, true)},
		{"utf-16be with a BOM", "utf-16be-bom", utf16Bytes(text, true, true)},
		{"utf-16le without a BOM", EncUTF16LE, utf16Bytes(text, false, false)},
		{"utf-16be without a BOM", EncUTF16BE, utf16Bytes(text, true, false)},
		{"utf-32le with a BOM", "utf-32le-bom", utf32Bytes(text, false, true)},
		{"utf-32be with a BOM", "utf-32be-bom", utf32Bytes(text, true, true)},
		{"utf-32le without a BOM", EncUTF32LE, utf32Bytes(text, false, false)},
		{"stray NUL bytes", EncUTF8, []byte("build 1\x00\n" + text + "\x00\x00done\n")},
		{"latin-1", EncUTF8, []byte("caf\xe9 cr\xe8me\n" + text)},
		{"png", EncBinary, png},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := decodeFile(c.data)
			if d.Encoding != c.enc {
				t.Fatalf("encoding %s, want %s", d.Encoding, c.enc)
			}
			if c.enc != EncBinary && !strings.Contains(d.Text, "aws_access_key_id = AKIA") {
				t.Errorf("decoded text %q", d.Text)
			}
			back, err := d.encode(d.Text)
			if err != nil || !bytes.Equal(back, c.data) {
				t.Errorf("written back differs (%v)", err)
			}
		})
	}
}

// TestSanitiseOddFiles: a secret in UTF-16/32 text or in text with a NUL
// byte is redacted and the file keeps its encoding; a secret in a binary
// file is masked in place; the report names file, line, kind and
// placeholder, never the secret.
func TestSanitiseOddFiles(t *testing.T) {
	key := "AKIA" + "QYLPMN5HHHFPZAM2"
	tok := "ghp_" + "k3Jd9QmZx7Lw2Rt5Vb8Nc4Hy6Fp1Sg0rFAKE"
	text := "[default]\naws_access_key_id = " + key + "\n"
	src := t.TempDir()
	files := map[string][]byte{
		"utf16.ini":  utf16Bytes(text, false, true),
		"utf16be.ps": utf16Bytes(text, true, false),
		"utf32.ini":  utf32Bytes(text, true, true),
		"nul.log":    []byte("step 1\x00\nexport GITHUB_TOKEN=" + tok + "\n"),
		"blob.bin":   append(append(bytes.Repeat([]byte{0, 0xff, 1, 0x80}, 40), "token="+tok+"\x00"...), bytes.Repeat([]byte{0, 0x90}, 40)...),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(t.TempDir(), "copy")
	c, err := Sanitise(context.Background(), NewRedactor(testDetector(t)), src, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Files != 5 || c.Decoded != 3 || c.Binary != 1 || c.Stats.Secrets != 2 {
		t.Errorf("copy %+v", c)
	}
	for name, orig := range files {
		got, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		d, o := decodeFile(got), decodeFile(orig)
		if d.Encoding != o.Encoding {
			t.Errorf("%s: written as %s, was %s", name, d.Encoding, o.Encoding)
		}
		if strings.Contains(d.Text, key) || strings.Contains(d.Text, tok[4:]) {
			t.Errorf("%s: secret left in the copy", name)
		}
		if name == "blob.bin" && (len(got) != len(orig) || !strings.Contains(d.Text, "token=REDACTED_GITHUB_PAT_1XX")) {
			t.Errorf("%s: %d bytes (was %d), masked %q", name, len(got), len(orig), d.Text)
		}
		if name != "blob.bin" && !strings.Contains(d.Text, "REDACTED_") {
			t.Errorf("%s: no placeholder in %q", name, d.Text)
		}
	}
	want := map[string]string{"utf16.ini": "2 aws-access-token REDACTED_AWS_ACCESS_TOKEN_1 utf-16le-bom",
		"utf16be.ps": "2 aws-access-token REDACTED_AWS_ACCESS_TOKEN_1 utf-16be", "nul.log": "2 github-pat REDACTED_GITHUB_PAT_1 utf-8",
		"utf32.ini": "2 aws-access-token REDACTED_AWS_ACCESS_TOKEN_1 utf-32be-bom", "blob.bin": "0 github-pat REDACTED_GITHUB_PAT_1 binary"}
	for _, f := range c.Redacted {
		if len(f.Replacements) != 1 {
			t.Errorf("%s: %+v", f.Path, f.Replacements)
			continue
		}
		r := f.Replacements[0]
		if got := strings.Join([]string{strconv.Itoa(r.Line), r.Rule, r.Placeholder, f.Encoding}, " "); got != want[f.Path] {
			t.Errorf("%s: report %q, want %q", f.Path, got, want[f.Path])
		}
		delete(want, f.Path)
	}
	if len(want) != 0 {
		t.Errorf("not in the report: %v", want)
	}
}

// TestSanitiseOneFile: SRC may be a single file.
func TestSanitiseOneFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), ".netrc")
	if err := os.WriteFile(src, []byte("machine git.example.com login bob password Xk9#mP2$qLw7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "netrc.copy")
	c, err := Sanitise(context.Background(), NewRedactor(testDetector(t)), src, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil || string(got) != "machine git.example.com login bob password REDACTED_NETRC_PASSWORD_1\n" {
		t.Fatalf("copy %q (%v)", got, err)
	}
	if len(c.Redacted) != 1 || c.Redacted[0].Path != ".netrc" {
		t.Errorf("report %+v", c.Redacted)
	}
}
