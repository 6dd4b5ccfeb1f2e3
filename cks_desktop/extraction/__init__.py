"""Documents into knowledge: extraction that scales past one prompt. Qt-free.

One job per module, in the order a run uses them:
- ``chunking``: the document's stored text cut by structure into ~1,100-token parts with exact
  offsets, pages, heading path, ~10 % overlap and the previous part's tail as context;
- ``prompt``: the per-part request (document text quoted as data, chunk-local refs, a verbatim quote
  per item), the batched duplicate question, and the cache key;
- ``vocabulary``: the session's types as a controlled vocabulary, synonyms mapped;
- ``grounding``: every quote found in its part by the app (exact, normalised, fuzzy) → span and page;
- ``resolution``: entity resolution in tiers (exact key, alias, fuzzy, one model question), no
  chained merges, pairs the person split remembered;
- ``plan``: the reviewable plan (riskiest first) and the ONE batch of store ops it becomes
  (objects, merges that keep everything, relations, ``add_evidence`` sources);
- ``cache``: the per-part answer cache, the runs table and the remembered "different" pairs
  (schema migration 8);
- ``runner``: a run in the background with progress, pause, cancel, an estimate and a cap.

The window's parts are in ``cks_desktop/ui/extraction``; the command is
``cks-desktop documents extract`` (``commands/extract_cmd.py``).
"""
