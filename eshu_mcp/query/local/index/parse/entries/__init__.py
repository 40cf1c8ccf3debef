"""
Languages declared one module each: a module's ``LANGUAGE`` holds the keyword arguments of
its :class:`..registry.LanguageEntry` (plain data; the registry gathers every module here).
With ``extractor="tags"`` and a tags query, a language needs no extractor code.
"""
