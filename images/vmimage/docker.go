package vmimage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/boxbench/boxbench/images/image"
	"github.com/boxbench/boxbench/images/rootfs"
	"github.com/boxbench/boxbench/internal/command"
)

// prepareTimeout bounds the boot that loads the image (TCG: a few minutes for a few hundred MB).
const prepareTimeout = 20 * time.Minute

// dockerRef is the database image's name in the guest's dockerd: the host engine's name for the
// same tree.
func dockerRef(tree rootfs.Tree) string { return image.Tag(tree.Recipe) }

// loadDockerImage boots the freshly built docker variant once (QEMU, TCG: the build must not
// depend on the host's accelerator) with a second disk holding a tar of the tree, the host
// engine's import instructions (environment, labels) and the image's name; the guest's
// /boxbench-prepare imports it into dockerd and powers off. The image stays in the base's
// /var/lib/docker, so a vm-docker box starts with the same image, labels included, as the host's
// engine has.
func loadDockerImage(ctx context.Context, tree rootfs.Tree, dir, work string) error {
	in := filepath.Join(work, "import")
	if err := os.MkdirAll(in, 0o755); err != nil {
		return err
	}
	if _, err := command.Run(ctx, "tar", "-C", tree.Dir, "--numeric-owner", "-cf", filepath.Join(in, "rootfs.tar"), "."); err != nil {
		return fmt.Errorf("tar the root filesystem: %w", err)
	}
	changes := strings.Join(image.ImportChanges(tree.Labels()), "\n") + "\n"
	if strings.Count(changes, "\n") != len(image.ImportChanges(tree.Labels())) {
		return fmt.Errorf("an import instruction of %s holds a line break", tree.DBMS)
	}
	if err := os.WriteFile(filepath.Join(in, "changes.txt"), []byte(changes), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(in, "ref.txt"), []byte(dockerRef(tree)+"\n"), 0o644); err != nil {
		return err
	}
	size, err := rootfs.DiskUsage(in)
	if err != nil {
		return err
	}
	tarFile := filepath.Join(work, "import.img")
	if _, err := command.Run(ctx, "mkfs.ext4", "-q", "-F", "-d", in, tarFile, fmt.Sprintf("%dM", size*11/10>>20+64)); err != nil {
		return err
	}
	_ = os.RemoveAll(in)
	defer os.Remove(tarFile)
	console := filepath.Join(work, "prepare-console.log")
	pctx, cancel := context.WithTimeout(ctx, prepareTimeout)
	defer cancel()
	_, qerr := command.Run(pctx, "qemu-system-x86_64", "-accel", "tcg,thread=multi", "-machine", "q35", "-cpu", "max",
		"-smp", "2", "-m", "2048", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
		"-kernel", filepath.Join(dir, "vmlinuz"), "-initrd", filepath.Join(dir, "initrd.img"),
		"-append", "root=/dev/vda rw console=ttyS0 init=/boxbench-prepare quiet panic=-1 boxbench.image="+dockerRef(tree),
		"-serial", "file:"+console,
		"-drive", "file="+filepath.Join(dir, "disk.img")+",format=raw,if=none,id=root", "-device", "virtio-blk-pci,drive=root,serial=bbroot",
		"-drive", "file="+tarFile+",format=raw,if=none,id=imp,readonly=on", "-device", "virtio-blk-pci,drive=imp,serial=bbimport")
	out, _ := os.ReadFile(console)
	if !strings.Contains(string(out), "BOXBENCH-PREPARE-DONE rc=0") {
		return fmt.Errorf("load %s into the guest's dockerd (qemu: %v); console:\n%s", dockerRef(tree), qerr, command.Tail(out, 2000))
	}
	return nil
}
