package provider

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"sync"
)

// buildIdentity names the build of the running executable: Go's build ID, which any change of
// the code or of the toolchain that built it changes, and which is the same for one build on
// every machine. It is empty when it cannot be read.
var buildIdentity = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	return readBuildID(f)
})

// readBuildID reads the Go build ID of an executable from the first 32 kB of its file, where
// Go writes it: in an ELF note (named "Go", of type 4) on ELF systems, else at the start of
// the text between `\xff Go build ID: "` and `"\n \xff`.
func readBuildID(f io.ReaderAt) string {
	start := make([]byte, 32<<10)
	n, _ := f.ReadAt(start, 0)
	start = start[:n]
	const prefix, suffix = "\xff Go build ID: \"", "\"\n \xff"
	if i := bytes.Index(start, []byte(prefix)); i >= 0 {
		id := start[i+len(prefix):]
		if j := bytes.Index(id, []byte(suffix)); j >= 0 {
			return string(id[:j])
		}
	}
	// An ELF note: the name's size (4), the ID's size, the type (4), "Go\x00\x00", the ID.
	const name, noteType = "Go\x00\x00", 4
	for rest, at := start, 0; ; {
		i := bytes.Index(rest, []byte(name))
		if i < 0 {
			return ""
		}
		at += i
		if at >= 12 {
			head := start[at-12 : at]
			size := binary.LittleEndian.Uint32(head[4:])
			if binary.LittleEndian.Uint32(head) == 4 && binary.LittleEndian.Uint32(head[8:]) == noteType &&
				size > 0 && size < 256 && at+4+int(size) <= len(start) {
				return string(start[at+4 : at+4+int(size)])
			}
		}
		at += len(name)
		rest = start[at:]
	}
}
