"""
The text block that leads every tool result, one module per answer family.
"""
