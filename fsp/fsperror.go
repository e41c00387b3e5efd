package fsp

// The errors the FSP answers with a code of the table (docs/fsp.md).

import (
	"errors"
	"fmt"
)

// fspError is a failure answered with a code of the table; reason goes to
// the log only, details (if any) to the client.
type fspError struct {
	code    int
	details string
	cause   error
}

func (e *fspError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("fsp %d: %v", e.code, e.cause)
	}
	return fmt.Sprintf("fsp %d: %s", e.code, e.details)
}

func fail(code int, details string) error { return &fspError{code: code, details: details} }

// storageFail is an unexpected error of the storage (3100), or 3600 when
// the storage says it is not valid as configured (errStorageInvalid); the
// cause is logged, never shown.
func storageFail(err error) error {
	if errors.Is(err, errStorageInvalid) {
		return &fspError{code: 3600, cause: err}
	}
	return &fspError{code: 3100, cause: err}
}

// emptyRootValue is the placeholder of the storage root that a request
// leaves empty (or that is unknown).
type emptyRootValue string

func (e emptyRootValue) Error() string { return "{" + string(e) + "} is empty" }

// pathFail is the FSP error of a path that did not parse, nil for none.
func pathFail(err error) error {
	var ne *nameError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errOutside):
		return fail(3300, "The path leaves your folder")
	case errors.As(err, &ne):
		return fail(3500, ne.details)
	}
	return fail(3500, "The path is not a file or folder path of this service")
}
