function [p, guard] = ard_port(name, dir, type, varargin)
  % P = ard_port(NAME, DIR, TYPE) declares a port of this block and returns its handle.
  %   DIR is 'in' or 'out'; TYPE a named type descriptor ('q:f64[7] tick:u32').
  %   Before ard_init the port is only declared (ard_init wires and attaches it); after
  %   ard_init it attaches at once to the connection of its own name.
  % ard_port(NAME, DIR, '', 'size', N): an opaque port of N bytes (packets are uint8 rows).
  % ard_port(NAME, DIR): adopt the size and type of the existing connection.
  % ard_port(..., 'connection', CONN): default connection other than NAME (--ard wins).
  % [P, GUARD] = ard_port(...) also returns an onCleanup object that closes P when GUARD is
  %   cleared or goes out of scope: at the end of the function holding it, on an error, and
  %   on Ctrl-C.
  % A NAME that is still open (a script run again after Ctrl-C) starts the block anew after
  %   ard_init: every open port is closed and the options forgotten, as ard_fini() does;
  %   before ard_init only that port is replaced. The old handles give ardnet:ARD_ESTATE.
  % Errors: ardnet:ARD_EBUSY (the connection has a live writer), ardnet:ARD_ETYPE, ...
  if nargin < 2
    % (not print_usage: MATLAB has none)
    error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: usage: ard_port(NAME, DIR, TYPE, ...)');
  end
  if nargin < 3
    type = '';
  end
  size = 0;
  conn = '';
  for i = 1:2:numel (varargin)
    if i + 1 > numel (varargin)
      error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: ard_port: option %s needs a value', varargin{i});
    end
    switch varargin{i}
      case 'size'
        size = double (varargin{i + 1});
      case 'connection'
        conn = varargin{i + 1};
      otherwise
        error ('ardnet:ARD_EINVAL', 'ARD_EINVAL: ard_port: unknown option ''%s''', varargin{i});
    end
  end
  p = ardnet_mex ('port', name, dir, type, size, conn);
  if nargout > 1
    % Closing a handle that is already closed (or of an earlier load of the MEX file) is a
    % no-op, so the guard never touches a port that replaced this one.
    guard = onCleanup (@() ardnet_mex ('close', p));
  end
end
