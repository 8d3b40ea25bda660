// Package docs embeds the runbooks (docs/runbooks, Chinese in docs/runbooks/zh) so that kubecause
// serves them itself: their links work where the public repository cannot be reached.
package docs

import "embed"

// Runbooks holds runbooks/*.md and runbooks/zh/*.md.
//
//go:embed runbooks/*.md runbooks/zh/*.md
var Runbooks embed.FS
