package providers

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxSSEEvent bounds one upstream SSE event.
const maxSSEEvent = 16 << 20

var errEventTooLarge = errors.New("provider stream event over 16 MiB")

// sseReader reads Server-Sent Events (https://html.spec.whatwg.org/multipage/server-sent-events.html).
type sseReader struct {
	r *bufio.Reader
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{r: bufio.NewReaderSize(r, 32<<10)} }

// next returns the next event's type and data (data lines joined by "\n").
// Comment-only and empty events are skipped. io.EOF means the stream ended
// at an event boundary.
func (s *sseReader) next() (event string, data []byte, err error) {
	var line []byte
	size := 0
	have := false
	for {
		line, err = s.readLine(&size)
		if err != nil {
			if err == io.EOF && have {
				return event, data, nil
			}
			return "", nil, err
		}
		if len(line) == 0 {
			if have {
				return event, data, nil
			}
			event, size = "", 0
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			event = string(value)
		case "data":
			if have {
				data = append(data, '\n')
			}
			data = append(data, value...)
			have = true
		}
	}
}

func (s *sseReader) readLine(size *int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		*size += len(chunk)
		if *size > maxSSEEvent {
			return nil, errEventTooLarge
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				// An unterminated last line is a truncated stream.
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
