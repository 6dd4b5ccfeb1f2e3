; Inno Setup 6 script: a per-user installer for CKS Desktop (no administrator rights needed).
; Installs the PyInstaller folder dist\cks-desktop\ to %LOCALAPPDATA%\Programs\CKS Desktop, adds a
; Start-menu entry (and optionally a desktop icon) and an uninstaller (Settings > Apps).
; The uninstaller removes the program only: data, settings and logs stay in %LOCALAPPDATA%\cks-desktop.
;
; Build (from the repository root, after PyInstaller and scripts\render_icons.py):
;   iscc /DAppVersion=<version> packaging\windows\cks-desktop.iss
; Output: dist\cks-desktop-<version>-windows-x86_64-setup.exe

#ifndef AppVersion
  #error Pass the version: iscc /DAppVersion=1.2.3 packaging\windows\cks-desktop.iss
#endif
#define AppName "CKS Desktop"
#define AppExe "cks-desktop.exe"
#define Root "..\.."

[Setup]
; AppId identifies the installation for upgrades and the uninstaller: never change it.
AppId={{6F1C2E0B-5C1D-4E7A-9B36-3C0A8D2F4B71}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=The CKS Desktop developers
PrivilegesRequired=lowest
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
SetupIconFile={#Root}\build\icons\cks-desktop.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
OutputDir={#Root}\dist
OutputBaseFilename=cks-desktop-{#AppVersion}-windows-x86_64-setup
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#Root}\dist\cks-desktop\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent
