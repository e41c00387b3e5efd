// Package fsperr holds the file-system-provider (FSP) error body, the
// contract's error table and the writer of its error bodies. Both
// fsp_error (the root package) and the fsp handler use it, so the body
// type and the table are written down once.
package fsperr

import (
	"net/http"

	"github.com/designbridge/caddy-designbridge/internal/contract"
)

// Row is one row of the FSP error table of the contract.
type Row struct {
	Code    int
	Status  int
	Message string
	Details string
}

// Table returns the FSP error table of the contract (docs/contracts.md,
// "The file-system provider (FSP) API"): code, message, HTTP status and
// the default details text. It is a function rather than a package
// variable so that nothing can change it.
func Table() []Row {
	return []Row{
		{3001, http.StatusServiceUnavailable, "FSP Error", "The file service failed; please try again later"},
		{3100, http.StatusServiceUnavailable, "Something went wrong accessing backend filesystem", "The storage behind the file service could not be reached; please try again later"},
		{3200, http.StatusNotFound, "Resource not found", "File or directory not found"},
		{3300, http.StatusForbidden, "Permission denied", "You are not allowed to change this file or directory"},
		{3400, http.StatusConflict, "Resource Already Exists", "A file or directory with this name already exists"},
		{3450, http.StatusUnprocessableEntity, "File Not Uploaded", "The file could not be uploaded"},
		{3500, http.StatusBadRequest, "Request Error", "The request could not be understood"},
		{3600, http.StatusForbidden, "User Error", "The storage configured for this user is not valid"},
		{3650, http.StatusUnauthorized, "Wrong Username or Password", "The file service credentials are missing or wrong"},
	}
}

// Lookup returns the table row of code, if code is in the table.
func Lookup(code int) (Row, bool) {
	for _, row := range Table() {
		if row.Code == code {
			return row, true
		}
	}
	return Row{}, false
}

// Body is the wire form of an FSP error: exactly these three members.
type Body struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

// Answer returns the body and status of a code of the table, with details
// replacing the table's text when not empty. A code outside the table
// answers as 3001: callers only pass codes of the table.
func Answer(code int, details string) (Body, int) {
	row, ok := Lookup(code)
	if !ok {
		row, _ = Lookup(3001)
	}
	if details == "" {
		details = row.Details
	}
	return Body{Code: row.Code, Message: row.Message, Details: details}, row.Status
}

// Write writes body as the FSP error response with status. The error is
// the client's connection failing, or a body that cannot be encoded.
func Write(w http.ResponseWriter, r *http.Request, body Body, status int) error {
	// Error answers are never cached.
	w.Header().Set("Cache-Control", "no-store")
	return contract.Write(w, r, status, body)
}
