package image

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/docker/docker/api/types/image"

	"github.com/boxbench/boxbench/images/image/tarball"
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
	sum, err := staticBinary(bin)
	if err != nil {
		return Image{}, err
	}
	tag := AgentRepository + ":" + sum[:16]
	labels := map[string]string{LabelBoxbench: "1", LabelAgentBuild: build}
	changes := append(ImportChanges(labels), `ENTRYPOINT ["`+AgentBinaryPath+`"]`, `CMD ["agent"]`, fmt.Sprintf("USER %d:%d", agentUID, agentUID))
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeAgentTree(pw, bin)) }()
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

// staticBinary checks that bin is a statically linked ELF executable and returns its SHA-256.
func staticBinary(bin string) (string, error) {
	f, err := elf.Open(bin)
	if err != nil {
		return "", fmt.Errorf("agent image: %s: %w", bin, err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			f.Close()
			return "", fmt.Errorf("agent image: %s is dynamically linked, and the image has no C library (build boxbench with CGO_ENABLED=0, as `make build` does)", bin)
		}
	}
	f.Close()
	r, err := os.Open(bin)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeAgentTree writes the agent image's whole tree as a tar archive.
func writeAgentTree(w io.Writer, bin string) error {
	data, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	tw := tarball.NewWriter(w, &tarball.Owner{})
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/nonexistent\nnobody:x:%d:%d:nobody:/nonexistent:/nonexistent\n", agentUID, agentUID)
	group := fmt.Sprintf("root:x:0:\nnogroup:x:%d:\n", agentUID)
	for _, err := range []error{
		tw.Dir("etc", 0o755),
		tw.Dir("tmp", 0o777|fs.ModeSticky),
		tw.File("etc/passwd", 0o644, []byte(passwd)),
		tw.File("etc/group", 0o644, []byte(group)),
		tw.File(AgentBinaryPath[1:], 0o755, data),
	} {
		if err != nil {
			return err
		}
	}
	return tw.Close()
}
