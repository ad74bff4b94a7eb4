"""The admin UI's pieces below its router: sessions, page rendering, charts, view data.

Server-rendered Jinja2 pages with autoescaping, one stylesheet, inline SVG; no script and no
build step. The router is `app.admin.ui.routes`.
"""
