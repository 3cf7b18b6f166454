package sessions

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// readHead reads the frontmatter block at the start of r, delimiters
// included, and nothing after it. It returns errNoFrontmatter (with the first
// line, for a title) when the file does not start with "---".
//
// This is the bounded reader that adrg/frontmatter, which decodes the
// block, is given: it reads its input to the end (a session's whole body),
// and answers "not found" both for a file without frontmatter and for one
// that is never closed, naming no line. readHead reads no further than the
// closing line, and never more than MaxFrontmatter, and its errors name
// the line.
//
// A file has frontmatter when its first line (after an optional
// byte-order mark) is "---", trailing blanks allowed; the block ends at
// the next line that is "---" or YAML's document end "...", again with
// trailing blanks only.
func readHead(r io.Reader) (head []byte, firstLine string, err error) {
	br := bufio.NewReaderSize(r, headBufSize)
	var buf bytes.Buffer
	lineNo := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// An overlong line: keep reading it.
			buf.Write(line)
			if buf.Len() > MaxFrontmatter {
				return nil, "", fmt.Errorf("line %d: frontmatter is longer than %d bytes or never closed: end it with a line \"---\"", lineNo+1, MaxFrontmatter)
			}
			continue
		}
		if len(line) == 0 && err == io.EOF && lineNo > 0 {
			// The file ends with a newline: its last line was lineNo.
			return nil, "", neverClosed(lineNo)
		}
		buf.Write(line)
		lineNo++
		text := string(line)
		if lineNo == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		// Only trailing blanks: an indented "---" belongs to a YAML value.
		text = strings.TrimRight(text, " \t\r\n")
		if lineNo == 1 {
			if text != "---" {
				return nil, text, errNoFrontmatter
			}
		} else if text == "---" || text == "..." {
			return buf.Bytes(), "", nil
		}
		if err == io.EOF {
			return nil, "", neverClosed(lineNo)
		}
		if err != nil {
			return nil, "", err
		}
		if buf.Len() > MaxFrontmatter {
			return nil, "", fmt.Errorf("line %d: frontmatter is longer than %d bytes or never closed: end it with a line \"---\"", lineNo, MaxFrontmatter)
		}
	}
}

// neverClosed is the error for frontmatter that ends at the end of the file
// on line lineNo.
func neverClosed(lineNo int) error {
	return fmt.Errorf("line %d: frontmatter opened on line 1 is never closed: add a line \"---\" after it", lineNo)
}

// headBufSize is what a first read takes to find the frontmatter: a typical
// session file whole, and no more than readHead's buffer, which is what
// lets scanHead stand in for readHead.
const headBufSize = 4096

// restAfter is what is left to read of r after a read that returned err.
func restAfter(r io.Reader, err error) io.Reader {
	if err != nil {
		return errReader{err}
	}
	return r
}

// errReader fails every read with err: what is left of a reader after a
// read that failed.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// scanHead is readHead of a stream that starts with data (and ends there if
// eof), for data of at most headBufSize bytes: within that, readHead's
// 4 KiB buffer never overflows and its 64 KiB limit never applies, so it
// is a plain scan of lines. ok is false when the answer lies beyond data.
func scanHead(data []byte, eof bool) (head []byte, firstLine string, err error, ok bool) {
	if len(data) > headBufSize {
		return nil, "", nil, false
	}
	lineNo := 0
	for pos := 0; ; {
		line := data[pos:]
		i := bytes.IndexByte(line, '\n')
		if i >= 0 {
			line = line[:i+1]
		} else if !eof || len(line) == headBufSize {
			// More to read, or a last line that fills readHead's buffer
			// (which then reads it as an overlong line).
			return nil, "", nil, false
		} else if len(line) == 0 && lineNo > 0 {
			return nil, "", neverClosed(lineNo), true
		}
		pos += len(line)
		lineNo++
		text := line
		if lineNo == 1 {
			text = bytes.TrimPrefix(text, []byte("\ufeff"))
		}
		text = bytes.TrimRight(text, " \t\r\n")
		if lineNo == 1 {
			if string(text) != "---" {
				return nil, string(text), errNoFrontmatter, true
			}
		} else if string(text) == "---" || string(text) == "..." {
			return data[:pos], "", nil, true
		}
		if i < 0 {
			return nil, "", neverClosed(lineNo), true
		}
	}
}
