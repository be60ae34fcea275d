package web

import (
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// inlineTypes are the only types a run's file is served as for the
// browser to show: images that run nothing (no SVG). Everything else is
// text/plain (UTF-8 text) or a download.
var inlineTypes = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}

// runFile serves a file of a run's folder (os.Root keeps it inside,
// symbolic links included). Whatever the file holds (a repository's .html
// or .svg among them), it never renders active on this origin: it is an
// image, text/plain, or an attachment, always with a sandbox CSP and
// nosniff. ?download=1 asks for an attachment.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	info, err := s.runs.Get(r.PathValue("id"))
	if err != nil {
		writeErr(w, err)
		return
	}
	root, err := os.OpenRoot(info.Out)
	if err != nil {
		writeErr(w, err)
		return
	}
	defer root.Close()
	f, err := root.Open(r.PathValue("path"))
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", fileCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	ctype, inline := inlineTypes[strings.ToLower(filepath.Ext(st.Name()))]
	if !inline {
		head := make([]byte, 4096)
		n, _ := f.Read(head)
		if _, err := f.Seek(0, 0); err != nil {
			http.Error(w, "read failed", http.StatusInternalServerError)
			return
		}
		ctype, inline = "text/plain; charset=utf-8", validUTF8Prefix(head[:n])
		if !inline {
			ctype = "application/octet-stream"
		}
	}
	h.Set("Content-Type", ctype)
	if !inline || r.URL.Query().Get("download") != "" {
		h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": st.Name()}))
	}
	http.ServeContent(w, r, "", st.ModTime(), f)
}

// validUTF8Prefix says whether b, the start of a file, is UTF-8 text (a
// rune cut at the end is allowed) with no NUL byte.
func validUTF8Prefix(b []byte) bool {
	for i := 0; i < len(b); {
		c, size := utf8.DecodeRune(b[i:])
		if c == 0 || c == utf8.RuneError && size == 1 && len(b)-i >= utf8.UTFMax {
			return false
		}
		i += size
	}
	return true
}
