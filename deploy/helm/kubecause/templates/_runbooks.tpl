{{/*
The mixin's runbook links (files/mixin) pointed at the runbooks kubecause serves when
web.externalURL is set: what the mixin renders with _config.kubecauseExternalURL,
<url>/runbooks/<page>?lang=<en|zh>#<anchor>. Argument: (list $ <text of a files/mixin file>).
*/}}
{{- define "kubecause.runbookLinks" -}}
{{- $text := index . 1 -}}
{{- with (index . 0).Values.web.externalURL -}}
{{- $repo := "https://github\\.com/kubecause/kubecause/blob/main/docs/runbooks/" -}}
{{- $base := printf "%s/runbooks/" (trimSuffix "/" .) -}}
{{- $text = regexReplaceAll (printf "%szh/README\\.md" $repo) $text (printf "%s?lang=zh" $base) -}}
{{- $text = regexReplaceAll (printf "%sREADME\\.md" $repo) $text (printf "%s?lang=en" $base) -}}
{{- $text = regexReplaceAll (printf "%szh/([a-z0-9]+)\\.md" $repo) $text (printf "%s${1}?lang=zh" $base) -}}
{{- $text = regexReplaceAll (printf "%s([a-z0-9]+)\\.md" $repo) $text (printf "%s${1}?lang=en" $base) -}}
{{- end -}}
{{- $text -}}
{{- end -}}
