package cli

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/llmkube/llmkube-compile/internal/httpget"
)

// URLTimeout bounds reading one -f URL (a variable so a test can shorten it).
var URLTimeout = 30 * time.Second

// maxInputBytes bounds one input read from stdin or a URL.
const maxInputBytes = 64 << 20

// source is one input to decode: its name for diagnostics and its bytes.
type source struct {
	name string
	data []byte
}

// readInputs reads what -f names, the way kubectl does: files, directories
// (their .yaml, .yml and .json files, sorted; with recursive, their
// subdirectories too), http(s) URLs, and - for stdin (once). A path that
// cannot be read is a usage error, worded once.
func (s *streams) readInputs(names []string, recursive bool) ([]source, error) {
	var out []source
	stdinUsed := false
	for _, name := range names {
		switch {
		case name == "-":
			if stdinUsed {
				return nil, usageErr("-f - may be given only once")
			}
			stdinUsed = true
			data, err := io.ReadAll(io.LimitReader(s.stdin, maxInputBytes))
			if err != nil {
				return nil, usageErr("reading stdin: %v", err)
			}
			out = append(out, source{"<stdin>", data})
		case strings.HasPrefix(name, "http://") || strings.HasPrefix(name, "https://"):
			data, err := fetch(name)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			out = append(out, source{name, data})
		default:
			files, err := expand(name, recursive)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					return nil, usageErr("%v", err) // an *fs.PathError already names the file
				}
				out = append(out, source{f, data})
			}
		}
	}
	return out, nil
}

// inputExtensions are the files a directory contributes.
var inputExtensions = []string{".yaml", ".yml", ".json"}

// expand turns a path into its files: a file is itself, a directory its
// input files, sorted (recursively with recursive).
func expand(path string, recursive bool) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != path && !recursive {
				return fs.SkipDir
			}
			return nil
		}
		if slices.Contains(inputExtensions, strings.ToLower(filepath.Ext(p))) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no .yaml, .yml or .json file in the directory%s", path, map[bool]string{false: " (use -R for its subdirectories)", true: ""}[recursive])
	}
	slices.Sort(files)
	return files, nil
}

// fetch reads an http(s) URL within URLTimeout.
func fetch(url string) ([]byte, error) {
	return httpget.Get(context.Background(), url, URLTimeout, maxInputBytes)
}
