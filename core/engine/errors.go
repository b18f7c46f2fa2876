package engine

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
)

// Error is a user-facing failure with the HTTP status and Senlin exception
// type the API reports.
type Error struct {
	Status  int
	Type    string
	Message string
}

func (e *Error) Error() string { return e.Message }

// BadRequest reports invalid input; the message names the field and rule.
func BadRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Type: "BadRequest", Message: fmt.Sprintf(format, args...)}
}

// Conflict reports a request that cannot run in the object's current state.
func Conflict(typ, format string, args ...any) error {
	return &Error{Status: http.StatusConflict, Type: typ, Message: fmt.Sprintf(format, args...)}
}

// Forbidden reports a request the caller may not make.
func Forbidden(format string, args ...any) error {
	return &Error{Status: http.StatusForbidden, Type: "Forbidden", Message: fmt.Sprintf(format, args...)}
}

// HTTPStatus maps any error to its HTTP status and exception type.
func HTTPStatus(err error) (int, string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, e.Type
	}
	if _, ok := errors.AsType[*host.UnavailableError](err); ok {
		return http.StatusServiceUnavailable, "PluginUnavailable"
	}
	var amb *store.AmbiguousError
	if errors.As(err, &amb) {
		return http.StatusBadRequest, "MultipleChoices"
	}
	if errors.Is(err, store.ErrInvalidRef) {
		return http.StatusBadRequest, "BadRequest"
	}
	// The store's unique constraint caught what the check before the write
	// missed (a concurrent create); it is the same conflict.
	if errors.Is(err, store.ErrDuplicate) {
		return http.StatusConflict, "ResourceInUse"
	}
	if errors.Is(err, store.ErrNotFound) {
		return http.StatusNotFound, "ResourceNotFound"
	}
	return http.StatusInternalServerError, "InternalError"
}
