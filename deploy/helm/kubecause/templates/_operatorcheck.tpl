{{- /*
The check NOTES.txt prints after install and upgrade: does a Prometheus of prometheus-operator select the
chart's ServiceMonitor and PrometheusRule? A label the Prometheus selects on (kube-prometheus-stack:
`release: <its release>`) missing from them loads nothing, and no alert says so. It reads the cluster with
helm's `lookup` (empty under `helm template` and client dry runs, so it prints nothing there) and follows the
operator's rules: a nil resource selector selects nothing, `{}` everything; a nil namespace selector only
the Prometheus' own namespace, `{}` every namespace.
*/ -}}

{{- /* "true" when the label selector (list selector labels) matches the labels. A nil selector matches nothing. */ -}}
{{- define "kubecause.selectorMatches" -}}
{{- $sel := index . 0 -}}
{{- $labels := index . 1 | default dict -}}
{{- $ok := kindIs "map" $sel -}}
{{- if $ok -}}
{{- range $k, $v := (get $sel "matchLabels" | default dict) -}}
{{- if not (and (hasKey $labels $k) (eq (toString (get $labels $k)) (toString $v))) -}}{{- $ok = false -}}{{- end -}}
{{- end -}}
{{- range (get $sel "matchExpressions" | default list) -}}
{{- $has := hasKey $labels .key -}}
{{- $in := and $has (has (toString (get $labels .key)) (.values | default list)) -}}
{{- if and (eq .operator "In") (not $in) -}}{{- $ok = false -}}
{{- else if and (eq .operator "NotIn") $in -}}{{- $ok = false -}}
{{- else if and (eq .operator "Exists") (not $has) -}}{{- $ok = false -}}
{{- else if and (eq .operator "DoesNotExist") $has -}}{{- $ok = false -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if $ok -}}true{{- end -}}
{{- end -}}

{{- /* The matchLabels pairs of a selector that labels lack, as "k=v, k=v". */ -}}
{{- define "kubecause.selectorMissing" -}}
{{- $sel := index . 0 -}}
{{- $labels := index . 1 | default dict -}}
{{- $missing := list -}}
{{- if kindIs "map" $sel -}}
{{- range $k, $v := (get $sel "matchLabels" | default dict) -}}
{{- if not (and (hasKey $labels $k) (eq (toString (get $labels $k)) (toString $v))) -}}
{{- $missing = append $missing (printf "%s=%v" $k $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- join ", " $missing -}}
{{- end -}}

{{- /*
One object's lines: (list $ kind object values-key selector-field namespace-selector-field prometheuses).
*/ -}}
{{- define "kubecause.operatorCheckObject" -}}
{{- $root := index . 0 -}}
{{- $kind := index . 1 -}}
{{- $obj := index . 2 -}}
{{- $valuesKey := index . 3 -}}
{{- $selField := index . 4 -}}
{{- $nsSelField := index . 5 -}}
{{- $proms := index . 6 -}}
{{- $ns := $obj.metadata.namespace -}}
{{- $labels := $obj.metadata.labels | default dict -}}
{{- $nsLabels := dict -}}
{{- $selectedBy := list -}}
{{- $why := list -}}
{{- $labelFix := false -}}
{{- $nsFix := false -}}
{{- range $proms -}}
{{- $p := printf "%s/%s" .metadata.namespace .metadata.name -}}
{{- $sel := get .spec $selField -}}
{{- $nsSel := get .spec $nsSelField -}}
{{- $nsOK := false -}}
{{- if not (kindIs "map" $nsSel) -}}
{{- $nsOK = eq .metadata.namespace $ns -}}
{{- else if not (or (get $nsSel "matchLabels") (get $nsSel "matchExpressions")) -}}
{{- $nsOK = true -}}
{{- else -}}
{{- if not $nsLabels -}}
{{- $nsObj := lookup "v1" "Namespace" "" $ns -}}
{{- $nsLabels = (get ($nsObj.metadata | default dict) "labels") | default (dict "kubernetes.io/metadata.name" $ns) -}}
{{- end -}}
{{- $nsOK = eq (include "kubecause.selectorMatches" (list $nsSel $nsLabels)) "true" -}}
{{- end -}}
{{- $selOK := eq (include "kubecause.selectorMatches" (list $sel $labels)) "true" -}}
{{- if and $selOK $nsOK -}}
{{- $selectedBy = append $selectedBy $p -}}
{{- else -}}
{{- $reason := "" -}}
{{- if not (kindIs "map" $sel) -}}
{{- $reason = printf "%s is not set: it selects no %s" $selField $kind -}}
{{- else if not $selOK -}}
{{- $missing := include "kubecause.selectorMissing" (list $sel $labels) -}}
{{- $reason = printf "%s %s does not match the %s's labels%s" $selField (toJson $sel) $kind (ternary "" (printf " (missing label %s)" $missing) (eq $missing "")) -}}
{{- $labelFix = true -}}
{{- else if not (kindIs "map" $nsSel) -}}
{{- $reason = printf "%s is not set: only %s in namespace %s" $nsSelField $kind .metadata.namespace -}}
{{- $nsFix = true -}}
{{- else -}}
{{- $reason = printf "%s %s does not match namespace %s" $nsSelField (toJson $nsSel) $ns -}}
{{- $nsFix = true -}}
{{- end -}}
{{- $why = append $why (printf "Prometheus %s: %s" $p $reason) -}}
{{- end -}}
{{- end -}}
{{- if $selectedBy -}}
{{ $kind }} {{ $ns }}/{{ $obj.metadata.name }} is selected by Prometheus {{ join ", " $selectedBy }}.
{{- else -}}
WARNING: no Prometheus selects {{ $kind }} {{ $ns }}/{{ $obj.metadata.name }}: {{ if eq $kind "PrometheusRule" }}its alerts are never evaluated{{ else }}kubecause is never scraped{{ end }}.
{{- range $why }}
  {{ . }}
{{- end }}
{{- if $labelFix }}
  Set {{ $valuesKey }}.labels to what the Prometheus selects (kube-prometheus-stack: --set {{ $valuesKey }}.labels.release=<its release name>).
{{- end }}
{{- if $nsFix }}
  Label namespace {{ $ns }} as the namespace selector wants, or put the {{ $kind }} in a namespace it selects ({{ $valuesKey }}.namespace).
{{- end }}
{{- end -}}
{{- end -}}

{{- /* The whole check, for NOTES.txt; nothing when it does not apply. */ -}}
{{- define "kubecause.operatorCheck" -}}
{{- if and .Values.prometheusOperatorCheck (or .Values.serviceMonitor.enabled .Values.prometheusRule.enabled) (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/Prometheus") -}}
{{- $list := lookup "monitoring.coreos.com/v1" "Prometheus" "" "" -}}
{{- if $list -}}
{{- $proms := $list.items | default list -}}
{{- if not $proms }}
WARNING: there is no Prometheus resource of prometheus-operator in the cluster: nothing loads the {{ if .Values.prometheusRule.enabled }}PrometheusRule{{ end }}{{ if and .Values.prometheusRule.enabled .Values.serviceMonitor.enabled }} or the {{ end }}{{ if .Values.serviceMonitor.enabled }}ServiceMonitor{{ end }}.
{{- else }}
prometheus-operator check ({{ len $proms }} Prometheus resource{{ if gt (len $proms) 1 }}s{{ end }}):
{{- if .Values.serviceMonitor.enabled }}
{{ include "kubecause.operatorCheckObject" (list . "ServiceMonitor" (include (print .Template.BasePath "/servicemonitor.yaml") . | fromYaml) "serviceMonitor" "serviceMonitorSelector" "serviceMonitorNamespaceSelector" $proms) }}
{{- end }}
{{- if .Values.prometheusRule.enabled }}
{{ include "kubecause.operatorCheckObject" (list . "PrometheusRule" (include (print .Template.BasePath "/prometheusrule.yaml") . | fromYaml) "prometheusRule" "ruleSelector" "ruleNamespaceSelector" $proms) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}
{{- end -}}
