{{/* Name of the chart, overridable. */}}
{{- define "kubecause.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name: the release name when it already contains the chart name. */}}
{{- define "kubecause.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "kubecause.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kubecause.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels of the helm test pod: not the exporter's selector labels (Service, PDB), so no selector takes it. */}}
{{- define "kubecause.testSelectorLabels" -}}
app.kubernetes.io/name: {{ include "kubecause.name" . }}-test
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubecause.labels" -}}
{{ include "kubecause.selectorLabels" . }}
app.kubernetes.io/version: {{ (default .Chart.AppVersion .Values.image.tag) | quote }}
app.kubernetes.io/part-of: kubecause
{{- if .Values.releaseLabel }}
release: {{ .Release.Name }}
{{- end }}
{{- if .Values.helmLabels }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}
{{- end -}}

{{- define "kubecause.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "kubecause.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
An image reference from (list $ .Values.<image> defaultTag): global.imageRegistry, else the image's
registry, then repository, then the digest or the tag.
*/}}
{{- define "kubecause.imageRef" -}}
{{- $root := index . 0 -}}
{{- $img := index . 1 -}}
{{- $registry := default $img.registry (($root.Values.global | default dict).imageRegistry) -}}
{{- $repo := $img.repository -}}
{{- if $registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" $registry) $repo }}{{ end -}}
{{- if $img.digest -}}
{{- printf "%s@%s" $repo $img.digest -}}
{{- else -}}
{{- printf "%s:%s" $repo (default (index . 2) $img.tag) -}}
{{- end -}}
{{- end -}}

{{- define "kubecause.image" -}}
{{- include "kubecause.imageRef" (list . .Values.image .Chart.AppVersion) -}}
{{- end -}}

{{/*
The name of an object taken from the mixin, prefixed by the release: the mixin names them "kubecause" and
"kubecause-…", which become "<fullname>" and "<fullname>-…", so two releases do not collide (and release
"kubecause" keeps the mixin's names).
*/}}
{{- define "kubecause.mixinName" -}}
{{- $root := index . 0 -}}
{{- printf "%s%s" (include "kubecause.fullname" $root) (trimPrefix "kubecause" (index . 1)) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Secret holding the web config: the chart's own or an existing one; empty when there is none. */}}
{{- define "kubecause.webSecret" -}}
{{- if .Values.web.existingSecret -}}
{{- .Values.web.existingSecret -}}
{{- else if .Values.web.config -}}
{{- printf "%s-web-config" (include "kubecause.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/*
Port, scheme and headers of the probes: the health listener when web.healthPort is set, else the main port.
*/}}
{{- define "kubecause.probeTarget" -}}
{{- if .Values.web.healthPort -}}
port: health
scheme: HTTP
{{- else -}}
port: http
scheme: {{ include "kubecause.scheme" . }}
{{- with .Values.probes.httpHeaders }}
httpHeaders:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}
{{- end -}}

{{- define "kubecause.scheme" -}}
{{- if .Values.web.tls }}HTTPS{{ else }}HTTP{{ end -}}
{{- end -}}

{{/*
The mixin's generated objects (files/mixin/*.yaml, written by hack/generate/mixin.sh),
as a list of maps. Files may hold several documents or a List.
*/}}
{{- define "kubecause.mixinObjects" -}}
{{- $objs := list -}}
{{- range $path, $_ := .Files.Glob "files/mixin/*.yaml" -}}
{{- range $doc := regexSplit "(?m)^---\\s*$" (include "kubecause.runbookLinks" (list $ ($.Files.Get $path))) -1 -}}
{{- $o := fromYaml $doc -}}
{{- if and $o (hasKey $o "kind") -}}
{{- if hasKey $o "items" -}}
{{- range $o.items }}{{ $objs = append $objs . }}{{ end -}}
{{- else -}}
{{- $objs = append $objs $o -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- dict "items" $objs | toJson -}}
{{- end -}}

{{/* Rules for the read-only access the checks need, shared by Role and ClusterRole. */}}
{{- define "kubecause.eventRules" -}}
- apiGroups: [""]
  resources: ["events"]
  verbs: ["get", "list", "watch"]
{{- end -}}

{{- define "kubecause.endpointRules" -}}
- apiGroups: [""]
  resources: ["services", "endpoints", "pods"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
{{- end -}}

{{/*
Labels of an object taken from the mixin: the chart's labels, the object's own, then the values' extras
(later ones win). Call with (list $ .metadata.labels extraLabels).
*/}}
{{- define "kubecause.mergedLabels" -}}
{{- $root := index . 0 -}}
{{- $labels := fromYaml (include "kubecause.labels" $root) -}}
{{- $labels = mergeOverwrite $labels (index . 1 | default dict) (index . 2 | default dict) -}}
{{- toYaml $labels -}}
{{- end -}}
