package adapter

import (
	"bytes"
	"io"
	"strings"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"golang.org/x/net/html"
)

// md renders CommonMark with GitHub's extensions (tables, strikethrough,
// autolinks, task lists), as chat views' markdown renderers commonly do.
var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// MarkdownText is the text a view that renders markdown shows for md: the
// text of the rendered HTML (code blocks' contents, link texts, entities
// decoded), without the markup. Raw HTML in md shows nothing (renderers
// drop or escape it); white space is kept as rendered, so compare it
// loosely.
func MarkdownText(src string) string {
	var buf bytes.Buffer
	if err := md.Convert([]byte(src), &buf); err != nil {
		return src // goldmark fails only on a failing writer
	}
	var sb strings.Builder
	z := html.NewTokenizer(&buf)
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return sb.String()
			}
			return src
		case html.TextToken:
			sb.Write(z.Text())
		}
	}
}

// withoutSpace drops every white space character.
func withoutSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
