package image

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/docker/api/types/image"
)

// AgentRepository is what agent images are tagged under: boxbench/agent:<first 16 hex digits
// of the binary's SHA-256>.
const AgentRepository = Repository + "/agent"

// LabelAgentBuild is an agent image's label holding the boxbench build of its binary.
const LabelAgentBuild = "io.boxbench.agent-build"

// AgentBinaryPath is where an agent image holds boxbench's binary; its entrypoint.
const AgentBinaryPath = "/boxbench"

// agentUID is the account the agent runs as in its image (nobody).
const agentUID = 65534

// BuildAgent makes an image that runs `boxbench agent` for a client on a node that is not this
// host: the binary bin (statically linked: the image has no C library), a passwd entry for
// nobody, a /tmp; entrypoint the binary, user nobody. build is the binary's boxbench build,
// recorded as a label. It returns the image, tagged AgentRepository:<hash prefix>; importing
// the same binary again gives the same tag.
func (s *Store) BuildAgent(ctx context.Context, bin, build string) (Image, error) {
	sum, size, err := staticBinary(bin)
	if err != nil {
		return Image{}, err
	}
	tag := AgentRepository + ":" + sum[:16]
	labels := map[string]string{LabelBoxbench: "1", LabelAgentBuild: build}
	changes := append(ImportChanges(labels), `ENTRYPOINT ["`+AgentBinaryPath+`"]`, `CMD ["agent"]`, fmt.Sprintf("USER %d:%d", agentUID, agentUID))
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeAgentTree(pw, bin, size)) }()
	rc, err := s.Engine.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, tag,
		image.ImportOptions{Changes: changes, Message: "boxbench images agent"})
	if err == nil {
		_, err = readProgress(rc)
		rc.Close()
	}
	pr.CloseWithError(errors.New("import finished"))
	if err != nil {
		return Image{}, fmt.Errorf("import the agent image %s: %w", tag, err)
	}
	ins, err := s.Engine.ImageInspect(ctx, tag)
	if err != nil {
		return Image{}, fmt.Errorf("the agent image %s after import: %w", tag, err)
	}
	return Image{Ref: tag, ID: ins.ID, Inputs: sum}, nil
}

// staticBinary checks that bin is a statically linked ELF executable and returns its SHA-256
// and size.
func staticBinary(bin string) (string, int64, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return "", 0, fmt.Errorf("agent image: %s: %w", bin, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			f.Close()
			return "", 0, fmt.Errorf("agent image: %s is dynamically linked, and the image has no C library (build boxbench with CGO_ENABLED=0, as `make build` does)", bin)
		}
	}
	f.Close()
	r, err := os.Open(bin)
	if err != nil {
		return "", 0, err
	}
	defer r.Close()
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// writeAgentTree writes the agent image's whole tree as a tar archive.
func writeAgentTree(w io.Writer, bin string, size int64) error {
	tw := tar.NewWriter(w)
	mt := time.Unix(0, 0)
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/nonexistent\nnobody:x:%d:%d:nobody:/nonexistent:/nonexistent\n", agentUID, agentUID)
	group := fmt.Sprintf("root:x:0:\nnogroup:x:%d:\n", agentUID)
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755},
		{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777},
	} {
		h.ModTime = mt
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
	}
	for name, body := range map[string]string{"etc/passwd": passwd, "etc/group": group} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body)), ModTime: mt}); err != nil {
			return err
		}
		if _, err := io.WriteString(tw, body); err != nil {
			return err
		}
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: AgentBinaryPath[1:], Mode: 0o755, Size: size, ModTime: mt}); err != nil {
		return err
	}
	if _, err := io.CopyN(tw, f, size); err != nil {
		return err
	}
	return tw.Close()
}
