function msg = expect_error(id, fn, varargin)
  % Call fn(varargin{:}); fail unless it raises an error with identifier id. Returns the
  % message.
  try
    fn (varargin{:});
  catch e
    if ~strcmp (e.identifier, id)
      error ('check:error', 'expected error %s, got %s: %s', id, e.identifier, e.message);
    end
    msg = e.message;
    return;
  end
  error ('check:error', 'expected error %s, got none', id);
end
