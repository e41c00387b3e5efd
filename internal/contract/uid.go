package contract

// MaxUIDLen is the longest uid accepted, in bytes: room for an email-derived
// or hashed account id, short enough for a path segment on any file system.
const MaxUIDLen = 256

// ValidUID is the LoginV2 uid rule: design_bridge checks a uid before it
// goes upstream and content_service what it receives, so the two accept
// exactly the same uids. It reports whether s is 1 to MaxUIDLen ASCII letters, digits, '_' or '-'.
func ValidUID(s string) bool {
	if s == "" || len(s) > MaxUIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
