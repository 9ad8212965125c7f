{
  description = "agent-workspace: isolated, resumable Jujutsu workspaces for agent workflows";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
      forAllSystems =
        f: nixpkgs.lib.genAttrs systems (system: f system nixpkgs.legacyPackages.${system});
      cargoToml = builtins.fromTOML (builtins.readFile ./Cargo.toml);
    in
    {
      packages = forAllSystems (
        system: pkgs: {
          default = pkgs.rustPlatform.buildRustPackage {
            pname = "agent-workspace";
            version = cargoToml.package.version;
            src = pkgs.lib.fileset.toSource {
              root = ./.;
              fileset = pkgs.lib.fileset.unions [
                ./Cargo.toml
                ./Cargo.lock
                ./src
              ];
            };
            cargoLock.lockFile = ./Cargo.lock;
            nativeBuildInputs = [ pkgs.installShellFiles ];
            # Completion scripts and manual pages come from the built binary itself.
            postInstall = pkgs.lib.optionalString (pkgs.stdenv.buildPlatform.canExecute pkgs.stdenv.hostPlatform) ''
              installShellCompletion --cmd agent-workspace \
                --bash <($out/bin/agent-workspace completions bash) \
                --zsh <($out/bin/agent-workspace completions zsh) \
                --fish <($out/bin/agent-workspace completions fish)
              $out/bin/agent-workspace man --dir man >/dev/null
              installManPage man/*.1
            '';
            # The integration tests run in `checks.tests` (below), which has jj, direnv and just.
            doCheck = false;
            meta = {
              description = cargoToml.package.description;
              license = with pkgs.lib.licenses; [
                mit
                asl20
              ];
              mainProgram = "agent-workspace";
            };
          };
        }
      );

      # `nix flake check` runs the whole test suite in the build sandbox against real jj, git,
      # direnv and just (no network needed: the tests make their repositories locally). The
      # sandbox tests are skipped there: bubblewrap cannot create user namespaces inside the
      # build sandbox; they run with `cargo test` (as .ci/run does). So are the MCP tests, whose
      # client (the Python MCP SDK >= 2) scripts/install-tools.sh installs with pip.
      checks = forAllSystems (
        system: pkgs: {
          tests = self.packages.${system}.default.overrideAttrs (old: {
            pname = "agent-workspace-tests";
            src = pkgs.lib.fileset.toSource {
              root = ./.;
              fileset = pkgs.lib.fileset.unions [
                ./Cargo.toml
                ./Cargo.lock
                ./src
                ./tests
                ./schema
                ./README.md
                ./justfile
                ./agents.just
              ];
            };
            doCheck = true;
            checkType = "debug";
            nativeCheckInputs = with pkgs; [
              jujutsu
              git
              direnv
              just
              groff
              bashInteractive
              python3
              tmux
              util-linux
              zsh
              fish
            ];
            # The build sandbox cannot nest bubblewrap's: the tests that need it (each says
            # `sandbox` in its name) are left out, and so are the MCP tests (no Python SDK).
            checkFlags = [
              "--skip=sandbox"
              "--skip=mcp::"
            ];
            preCheck = ''
              export HOME=$TMPDIR
            '';
          });
        }
      );

      apps = forAllSystems (
        system: pkgs: {
          default = {
            type = "app";
            program = "${self.packages.${system}.default}/bin/agent-workspace";
          };
        }
      );

      devShells = forAllSystems (
        system: pkgs: {
          default = pkgs.mkShell {
            packages = with pkgs; [
              jujutsu
              direnv
              just
              git
              cargo
              rustc
              clippy
              rustfmt
              rust-analyzer
              hyperfine
            ];
          };
        }
      );
    };
}
