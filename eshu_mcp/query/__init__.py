"""Query Resources: what answers the ``/api/v0`` requests that tool calls become."""
