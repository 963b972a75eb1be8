package server

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// cursorPrefix marks Parley's cursors so a cursor from elsewhere is refused
// rather than misread.
const cursorPrefix = "parley.page.v1:"

// Paginate returns the page of items that cursor points at, at most size
// long, and the cursor of the next page ("" on the last page). An empty
// cursor is the first page. A cursor Paginate did not make is an
// invalid-params error (-32602), which a handler returns as it is.
//
// Cursors are opaque to clients but not secret: they encode an offset. Lists
// that change between pages may skip or repeat an item, as with any offset
// pagination.
func Paginate[T any](items []T, cursor string, size int) (page []T, next string, err error) {
	if size <= 0 {
		size = len(items)
	}
	start := 0
	if cursor != "" {
		start, err = decodeCursor(cursor)
		if err != nil || start > len(items) {
			return nil, "", InvalidParams("Invalid params: invalid cursor")
		}
	}
	end := min(start+size, len(items))
	if end < len(items) {
		next = encodeCursor(end)
	}
	return items[start:end], next, nil
}

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func decodeCursor(cursor string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, err
	}
	rest, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return 0, strconv.ErrSyntax
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || encodeCursor(n) != cursor {
		return 0, strconv.ErrSyntax
	}
	return n, nil
}
