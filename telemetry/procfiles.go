package telemetry

import (
	"io"
	"os"
)

// procFiles keeps /proc files open between readings and re-reads each with one pread at
// offset 0, which makes the kernel render it afresh: one system call a reading instead of
// open, read and close, for the collectors that read many small files every interval. A file
// not read in a tick is closed at the next sweep (its task is gone or no longer wanted); close
// releases every file (Sampler.Stop).
type procFiles struct {
	open map[string]*procFile
	buf  []byte
	tick uint64
}

type procFile struct {
	f    *os.File
	tick uint64
}

func newProcFiles() *procFiles {
	return &procFiles{open: map[string]*procFile{}, buf: make([]byte, 8192)}
}

// read returns the file's content (valid until the next read); ok is false when it cannot be
// read (the task exited).
func (p *procFiles) read(path string) ([]byte, bool) {
	pf := p.open[path]
	if pf == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, false
		}
		pf = &procFile{f: f}
		p.open[path] = pf
	}
	pf.tick = p.tick
	n, err := pf.f.ReadAt(p.buf, 0)
	if err != nil && err != io.EOF {
		pf.f.Close()
		delete(p.open, path)
		return nil, false
	}
	return p.buf[:n], true
}

// sweep closes the files the last tick did not read and starts a new tick.
func (p *procFiles) sweep() {
	for path, pf := range p.open {
		if pf.tick != p.tick {
			pf.f.Close()
			delete(p.open, path)
		}
	}
	p.tick++
}

func (p *procFiles) Close() error {
	for path, pf := range p.open {
		pf.f.Close()
		delete(p.open, path)
	}
	return nil
}
