package fsp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Storage is what the handler needs of a back end. Keys are slash-separated
// paths relative to the back end's base, without leading or trailing
// slash; "" is the base itself. Errors that mean something to the client
// wrap fs.ErrNotExist, fs.ErrExist or errNotEmpty; any other error is a
// failure of the storage (3100).
type Storage interface {
	// Stat describes the file or directory at key; dir says which one the
	// caller means, since on object storage a name may be both.
	Stat(ctx context.Context, key string, dir bool) (Entry, error)
	// Exists is Stat without the description: nil when the file or (dir)
	// directory at key exists, fs.ErrNotExist when not. A folder's Stat
	// counts its children; a check of a name needs none of that, and a
	// keep upload checks up to maxKeepAttempts names.
	Exists(ctx context.Context, key string, dir bool) error
	// Names looks at the names of keys, which share one folder (a keep
	// upload's or move's candidates), in as few requests as the back end
	// allows, and says for each whether a file or folder holds it
	// (nameTaken), none does (nameFree), or it could not tell
	// (nameUnknown): the caller checks those with Exists. What it says
	// may be out of date by the time it is used; the write that follows
	// is exclusive.
	Names(ctx context.Context, keys []string) ([]nameState, error)
	// List returns the entries of directory dir, hidden ones (names
	// starting with a dot: thumbnails, temporary files) included.
	List(ctx context.Context, dir string) ([]Entry, error)
	// Mkdir creates directory dir: its parent must exist (fs.ErrNotExist)
	// and it must not (fs.ErrExist). With parents, missing parents are
	// created and an existing dir is no error.
	Mkdir(ctx context.Context, dir string, parents bool) error
	// Rmdir removes the empty directory dir (errNotEmpty otherwise).
	Rmdir(ctx context.Context, dir string) error
	// Write stores data at key so that it appears whole or not at all,
	// and returns its version (see Version). With exclusive, an existing
	// key is left alone and fs.ErrExist returned, even against a
	// concurrent writer.
	Write(ctx context.Context, key string, data []byte, contentType string, exclusive bool) (string, error)
	// WriteFirstFree stores data under the first of keys that is free,
	// writing the bytes once however many keys are taken (a lost race
	// for a key may cost one more write on object storage), and returns
	// its index and version; fs.ErrExist when every key is taken. Before
	// it writes to keys[i], found free, it calls prepare(i), whose error
	// ends it with nothing written.
	WriteFirstFree(ctx context.Context, keys []string, data []byte, contentType string, prepare func(int) error) (int, string, error)
	// Version tells what is stored at key now: another write there gives
	// another version, unless it stored the same bytes (the version is a
	// digest of them: SHA-256 locally, the ETag on S3). A thumbnail is
	// kept only while its file has the version it was made for.
	Version(ctx context.Context, key string) (string, error)
	// Read returns the bytes of the file at key and their version, or
	// errTooLarge when it holds more than max bytes.
	Read(ctx context.Context, key string, max int64) ([]byte, string, error)
	// Remove deletes the file at key.
	Remove(ctx context.Context, key string) error
	// Move renames the file from to to. With exclusive an existing to is
	// fs.ErrExist; without, to is replaced, and from and to never both
	// or neither exist once Move returns nil.
	Move(ctx context.Context, from, to string, exclusive bool) error
	// Close releases the back end's resources.
	Close() error
}

// nameState is what Storage.Names knows of a name.
type nameState uint8

const (
	nameUnknown nameState = iota
	nameTaken
	nameFree
)

// Entry describes a file or directory.
type Entry struct {
	Name        string
	Dir         bool
	Size        int64
	ModTime     time.Time
	ContentType string // files: the stored type, "" if unknown
	ItemCount   int    // directories: listed children, up to maxDirCount
}

// maxDirCount bounds the work of counting a folder's children for its
// item-count in its parent's listing: about one S3 listing page. A folder
// with more children has the item-count 0 there, the contract's
// "unknown"; its own listing counts them all.
const maxDirCount = 1000

// maxListEntries bounds the keys (files, folders, the provider's own
// files) one listing of a folder reads: a hundred S3 pages. A storage
// that pages without end, or a folder holding more, answers
// errTooManyEntries, not a listing that grows until memory runs out.
const maxListEntries = 100_000

// errTooManyEntries is a folder List stops reading at maxListEntries.
var errTooManyEntries = fmt.Errorf("the folder holds more than %d entries, more than one listing reads", maxListEntries)

// errStorageInvalid is a storage that is not usable as configured (a
// missing bucket, credentials it refuses): 3600, not 3100.
var errStorageInvalid = errors.New("storage not valid as configured")

// errTooLarge is a file Read finds larger than it may hold.
var errTooLarge = errors.New("file larger than the bound")

// errNotEmpty is a directory removal refused because of its contents.
var errNotEmpty = errors.New("directory not empty")

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
func isExist(err error) bool    { return errors.Is(err, fs.ErrExist) }
