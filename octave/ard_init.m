function rest = ard_init(args)
  % REST = ard_init(ARGS) applies and removes the --ard* options (docs/options.md) from the
  %   cell array of strings ARGS, attaches every declared port and tells ardstart --wait that
  %   the block is ready. REST is ARGS without the options. Without ARGS, Octave's argv() is
  %   used (the arguments after the script's name); under MATLAB, {}.
  %   Called again (a script run again after Ctrl-C), it starts the block anew first: every
  %   open port is closed and the options forgotten, as ard_fini() does; declare the ports
  %   again before it. --ard-help prints the ports and exits the interpreter with status 0,
  %   as it does for a C block.
  if nargin < 1
    if exist ('OCTAVE_VERSION', 'builtin')
      args = argv ();
      args = reshape (args, 1, numel (args));
    else
      args = {};
    end
  end
  rest = ardnet_mex ('init', args);
end
