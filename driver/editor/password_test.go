package editor

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/crypto/argon2"
)

// The hash is what code-server's argon2 library reads: a PHC string whose
// salt and parameters reproduce the key for the password, and only for it.
func TestHashPassword(t *testing.T) {
	h, err := hashPassword("open sesame")
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(h, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		t.Fatalf("hash %q", h)
	}
	var m, tm uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &tm, &p); err != nil {
		t.Fatalf("parameters %q: %v", parts[3], err)
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(salt) < 16 {
		t.Fatalf("salt %v key %v", err1, err2)
	}
	if !bytes.Equal(argon2.IDKey([]byte("open sesame"), salt, tm, m, p, uint32(len(key))), key) {
		t.Error("the key does not match the password")
	}
	if bytes.Equal(argon2.IDKey([]byte("open sesame!"), salt, tm, m, p, uint32(len(key))), key) {
		t.Error("the key matches another password")
	}
	if h2, _ := hashPassword("open sesame"); h2 == h {
		t.Error("two hashes share a salt")
	}
}
