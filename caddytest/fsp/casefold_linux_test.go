package fsp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestProviderCaseInsensitiveFolder runs checkCaseUsers on a folder that
// ignores letter case, as macOS's and Windows' file systems do: there
// "Bob" and "bob" would name one folder, and each user would list, read
// and delete the other's files. Linux makes such a folder on a tmpfs
// mounted with casefold=utf8 (kernel 6.13 and later) or an ext4 made with
// -O casefold, in a folder marked chattr +F; both need root and a kernel
// built with CONFIG_UNICODE. FSP_TEST_CASEFOLD_DIR names a folder that
// ignores case made some other way (a FUSE file system, a disk image);
// the test works in a new folder inside it. Elsewhere the test is skipped.
func TestProviderCaseInsensitiveFolder(t *testing.T) {
	if dir := os.Getenv("FSP_TEST_CASEFOLD_DIR"); dir != "" {
		store, err := os.MkdirTemp(dir, "casefold-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(store) })
		if err := checkFolds(store); err != nil {
			t.Fatalf("FSP_TEST_CASEFOLD_DIR: %v", err)
		}
		checkCaseUsers(t, store, true)
		return
	}
	store, err := caseInsensitiveFolder(t)
	if err != nil {
		t.Skipf("no case-insensitive folder can be made here (or set FSP_TEST_CASEFOLD_DIR): %v", err)
	}
	checkCaseUsers(t, store, true)
}

// caseInsensitiveFolder mounts a file system that can ignore case and
// returns a folder on it that does, or why none could be made.
func caseInsensitiveFolder(t *testing.T) (string, error) {
	var why []string
	mnt := t.TempDir()
	err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=8m,casefold=utf8")
	if err == nil {
		t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
		dir, err := foldingFolder(mnt)
		if err == nil {
			return dir, nil
		}
		why = append(why, "tmpfs casefold=utf8: "+err.Error())
	} else {
		why = append(why, "tmpfs casefold=utf8: "+err.Error())
	}

	mnt = t.TempDir()
	img := filepath.Join(t.TempDir(), "casefold.ext4")
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", "casefold", img, "8M").CombinedOutput(); err != nil {
		why = append(why, "mkfs.ext4 -O casefold: "+oneLine(err, out))
	} else if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		why = append(why, "mounting an ext4 with casefold: "+oneLine(err, out))
	} else {
		t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
		dir, err := foldingFolder(mnt)
		if err == nil {
			return dir, nil
		}
		why = append(why, "ext4 casefold: "+err.Error())
	}
	return "", errors.New(strings.Join(why, "; "))
}

// foldingFolder makes the empty folder "store" in mnt ignore case (chattr
// +F; on a tmpfs mounted with casefold it may already) and checks that it
// does.
func foldingFolder(mnt string) (string, error) {
	dir := filepath.Join(mnt, "store")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	chattr, chattrErr := exec.Command("chattr", "+F", dir).CombinedOutput()
	if err := checkFolds(dir); err != nil {
		if chattrErr != nil {
			return "", errors.New("chattr +F: " + oneLine(chattrErr, chattr))
		}
		return "", err
	}
	return dir, nil
}

// checkFolds is nil when dir ignores letter case.
func checkFolds(dir string) error {
	probe := filepath.Join(dir, "Probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return err
	}
	_, err := os.Lstat(filepath.Join(dir, "pROBE"))
	if rmErr := os.Remove(probe); rmErr != nil {
		return rmErr
	}
	if err != nil {
		return errors.New(dir + " tells Probe from pROBE")
	}
	return nil
}

// oneLine is a command's error and output on one line.
func oneLine(err error, out []byte) string {
	text := strings.Join(strings.Fields(string(out)), " ")
	if text == "" {
		return err.Error()
	}
	return err.Error() + ": " + text
}
