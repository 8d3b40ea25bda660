// A few helpers to build Grafana dashboards in plain jsonnet (grafonnet is not vendored).
{
  // A dashboard with the datasource and cluster variables, panels laid out left to right.
  dashboard(cfg, file, title, description, panels, extraVariables=[]):: {
    uid: std.md5(file),
    title: title,
    description: description,
    tags: cfg.grafanaTags,
    editable: true,
    graphTooltip: 1,
    refresh: cfg.grafanaRefresh,
    schemaVersion: 39,
    time: { from: cfg.grafanaTimeFrom, to: 'now' },
    timezone: '',
    links: [
      {
        title: 'Runbooks',
        type: 'link',
        url: cfg.runbookIndexURL,
        targetBlank: true,
        icon: 'doc',
      },
      { title: 'kubecause', type: 'dashboards', tags: cfg.grafanaTags, asDropdown: true, includeVars: true, keepTime: true },
    ],
    templating: {
      list: [
        {
          name: 'datasource',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: { selected: true, text: 'default', value: 'default' },
          hide: 0,
        },
        {
          name: 'cluster',
          label: 'Cluster',
          type: 'query',
          datasource: { type: 'prometheus', uid: '${datasource}' },
          query: { query: 'label_values(up{%s}, %s)' % [cfg.kubecauseSelector, cfg.clusterLabel], refId: 'cluster' },
          definition: 'label_values(up{%s}, %s)' % [cfg.kubecauseSelector, cfg.clusterLabel],
          refresh: 2,
          sort: 1,
          hide: if cfg.showMultiCluster then 0 else 2,
        },
        // On every dashboard, so the dashboard links (includeVars) carry the namespace along;
        // cluster-wide dashboards (SLO, exporter) ignore it.
        $.namespaceVariable(cfg),
      ] + extraVariables,
    },
    panels: $.layout(panels),
  },

  // A namespace variable (multi-select, all by default).
  namespaceVariable(cfg):: {
    name: 'namespace',
    label: 'Namespace',
    type: 'query',
    datasource: { type: 'prometheus', uid: '${datasource}' },
    query: { query: 'label_values(kubecause_events_total{%s, %s="$cluster"}, namespace)' % [cfg.kubecauseSelector, cfg.clusterLabel], refId: 'namespace' },
    definition: 'label_values(kubecause_events_total{%s, %s="$cluster"}, namespace)' % [cfg.kubecauseSelector, cfg.clusterLabel],
    refresh: 2,
    sort: 1,
    multi: true,
    includeAll: true,
    allValue: '.*',
    current: { selected: true, text: 'All', value: '$__all' },
    hide: 0,
  },

  // Places panels in rows of 24 units by their width w and height h.
  layout(panels)::
    local place(acc, p) =
      local w = p.w;
      local h = p.h;
      local wrap = acc.x + w > 24;
      local x = if wrap then 0 else acc.x;
      local y = if wrap then acc.y + acc.rowH else acc.y;
      local rowH = if wrap then h else std.max(acc.rowH, h);
      {
        x: x + w,
        y: y,
        rowH: rowH,
        id: acc.id + 1,
        out: acc.out + [p { id: acc.id, gridPos: { x: x, y: y, w: w, h: h } }],
      };
    std.foldl(place, panels, { x: 0, y: 0, rowH: 0, id: 1, out: [] }).out,

  target(expr, legend='', instant=false, format='time_series', refId='A'):: {
    datasource: { type: 'prometheus', uid: '${datasource}' },
    expr: std.rstripChars(expr, '\n'),
    legendFormat: legend,
    refId: refId,
    instant: instant,
    range: !instant,
    format: format,
  },

  // Runbook link of a panel.
  runbookLink(cfg, alert, anchor=''):: {
    title: 'Runbook: ' + alert,
    url: (cfg.runbookURLPattern % std.asciiLower(alert)) + (if anchor != '' then '#' + anchor else ''),
    targetBlank: true,
  },

  local panel(type, title, description, unit, targets, w, h, links) = {
    type: type,
    title: title,
    description: description,
    datasource: { type: 'prometheus', uid: '${datasource}' },
    targets: [
      targets[i] { refId: std.char(65 + i) }
      for i in std.range(0, std.length(targets) - 1)
    ],
    fieldConfig: { defaults: { unit: unit }, overrides: [] },
    links: links,
    w: w,
    h: h,
  },

  timeseries(title, description, unit, targets, w=12, h=8, links=[], stack=false)::
    panel('timeseries', title, description, unit, targets, w, h, links) {
      fieldConfig+: { defaults+: { custom: { drawStyle: 'line', fillOpacity: if stack then 30 else 10, stacking: { mode: if stack then 'normal' else 'none' } } } },
      options: { legend: { displayMode: 'table', placement: 'right', calcs: ['lastNotNull', 'max'] }, tooltip: { mode: 'multi', sort: 'desc' } },
    },

  stat(title, description, unit, targets, w=6, h=5, links=[], thresholds=null)::
    panel('stat', title, description, unit, targets, w, h, links) {
      fieldConfig+: { defaults+: if thresholds == null then {} else { thresholds: { mode: 'absolute', steps: thresholds } } },
      options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, colorMode: 'value', graphMode: 'area' },
    },

  // A table of an instant query; fieldLinks: { field: url } data links on columns.
  table(title, description, unit, targets, w=24, h=9, links=[], fieldLinks={}, hidden=[])::
    panel('table', title, description, unit, targets, w, h, links) {
      targets: [t { instant: true, range: false, format: 'table' } for t in super.targets],
      fieldConfig+: {
        overrides: [
          {
            matcher: { id: 'byName', options: f },
            properties: [{ id: 'links', value: [{ title: 'Runbook', url: fieldLinks[f], targetBlank: true }] }],
          }
          for f in std.objectFields(fieldLinks)
        ] + [
          { matcher: { id: 'byName', options: f }, properties: [{ id: 'custom.hidden', value: true }] }
          for f in hidden
        ],
      },
      transformations: [{ id: 'organize', options: { excludeByName: { Time: true } } }],
      options: { showHeader: true, sortBy: [] },
    },
}
